import type { ImapFlow } from 'imapflow'
import type { ChannelEndpoint, ChannelKernel, Logger } from '../../src/plugin-host/sdk.ts'
import { readMail } from './inbound.ts'
import { mailServer } from './servers.ts'

/** Mails handed on per look into a mailbox; more wait for the next look, so one look stays short. */
const MAILS_PER_POLL = 25
/** Mails larger than this are read from their start only (text, no attachments): memory is not the sender's to fill. */
const MAIL_SIZE_LIMIT = 32 * 1024 * 1024
const CONNECT_TIMEOUT_MS = 30_000
const SOCKET_TIMEOUT_MS = 120_000

/** What imapflow adds to its errors: its own message alone is often just "Command failed". */
interface ImapError extends Error {
  authenticationFailed?: boolean
  responseText?: string
  response?: unknown
}

/** An IMAP failure in a sentence an admin can act on. */
function imapProblem(error: unknown, user: string): string {
  const failure = error as ImapError
  const said = (failure.responseText || (typeof failure.response === 'string' ? failure.response : '')).replace(/\.$/, '')
  if (failure.authenticationFailed) return `the IMAP server refused the login of ${user}${said ? `: ${said}` : ''}; check email.username and the password secret.`
  return said ? `${failure.message}: ${said}` : failure.message
}

/**
 * One look into the agent's INBOX: each unseen mail is handed to the kernel, then marked seen. In that order, so a
 * process that dies in between reads the mail again next time, and the kernel, which knows its Message-ID, drops
 * the repeat; so may several processes read one mailbox at once.
 */
export async function pollMailbox(kernel: ChannelKernel, log: Logger, endpoint: ChannelEndpoint<'email'>): Promise<void> {
  const server = await mailServer(kernel, endpoint, 'imap')
  // Loaded on the first look into a mailbox: the IMAP client is a large module most deployments never use.
  const { ImapFlow } = await import('imapflow')
  const client = new ImapFlow({
    host: server.address,
    port: server.port,
    secure: server.secure,
    ...(server.servername ? { servername: server.servername } : {}),
    auth: { user: server.user, pass: server.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  })
  // A connection that breaks is reported by the command waiting on it; unheard, the event would end the process.
  client.on('error', () => {})
  try {
    await client.connect()
    const lock = await client.getMailboxLock('INBOX')
    try {
      const unseen = (await client.search({ seen: false }, { uid: true })) || []
      for (const uid of unseen.slice(0, MAILS_PER_POLL)) await handOn(kernel, log, endpoint, client, uid)
    } finally {
      lock.release()
    }
  } catch (error) {
    throw new Error(imapProblem(error, server.user), { cause: error })
  } finally {
    await client.logout().catch(() => client.close())
  }
}

async function handOn(kernel: ChannelKernel, log: Logger, endpoint: ChannelEndpoint<'email'>, client: ImapFlow, uid: number): Promise<void> {
  const { size } = (await client.fetchOne(String(uid), { size: true }, { uid: true })) || {}
  const truncated = size !== undefined && size > MAIL_SIZE_LIMIT
  const fetched = await client.fetchOne(String(uid), { source: truncated ? { maxLength: MAIL_SIZE_LIMIT } : true }, { uid: true })
  // Gone meanwhile: another process read it and it was moved or deleted.
  if (!fetched || !fetched.source) return
  const read = await readMail(fetched.source, endpoint.email, truncated ? size : undefined).catch(async (error: Error) => {
    // A mail that cannot be read never will be: marked seen below, or it would fail every look from now on.
    await kernel.failed(endpoint, `A mail (IMAP uid ${uid}) could not be read and was left unanswered: ${error.message}`)
    return undefined
  })
  if (read && 'skipped' in read) log.info('mail left unanswered', { agent: endpoint.agentId, uid, reason: read.skipped })
  if (read && 'message' in read) await kernel.receive(endpoint, read.message)
  await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true })
}
