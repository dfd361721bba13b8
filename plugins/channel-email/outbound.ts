import type Mail from 'nodemailer/lib/mailer'
import type { SMTPError } from 'nodemailer/lib/smtp-connection'
import { ChannelSendError, type ChannelDriver, type ChannelEndpoint, type ChannelKernel } from '../../src/plugin-host/sdk.ts'
import { mailServer, MailSettingsError } from './servers.ts'
import { readTarget, type MailTarget } from './target.ts'

/** Mail has no practical length limit: an answer goes out whole, as one mail. */
const MAIL_MAX_LENGTH = 100_000
const CONNECT_TIMEOUT_MS = 30_000
const SOCKET_TIMEOUT_MS = 60_000

/** The answer as a mail in the thread it answers, from the agent's address, signed as its settings say. */
export function composeAnswer(endpoint: ChannelEndpoint<'email'>, target: MailTarget, text: string): Mail.Options {
  const { email } = endpoint
  const address = email.from_alias ?? email.account
  if (!address) throw new MailSettingsError(`The agent ${endpoint.agentName} has no address to send from: set email.account (or email.from_alias).`)
  const domain = address.split('@').at(-1)!
  return {
    from: { name: email.sender_name ?? endpoint.agentName, address },
    to: target.to,
    subject: target.subject,
    // "-- " on a line of its own is how mail programs know a signature (and leave it out of quotes).
    text: email.signature ? `${text}\n\n-- \n${email.signature}` : text,
    messageId: `<${Bun.randomUUIDv7()}@${domain}>`,
    ...(target.in_reply_to ? { inReplyTo: target.in_reply_to } : {}),
    ...(target.references.length > 0 ? { references: target.references } : {}),
    // An answer is automatic: vacation notices and other responders must not answer it back (RFC 3834).
    headers: { 'Auto-Submitted': 'auto-replied' },
  }
}

/**
 * Whether trying again may help: a 4xx reply is the server's "later" (greylisting, a full queue), and a connection
 * that failed may work next time; a 5xx reply (a refused recipient, refused credentials) will not change.
 */
export function sendError(error: unknown): ChannelSendError {
  if (error instanceof ChannelSendError) return error
  if (error instanceof MailSettingsError) return new ChannelSendError(error.message, false)
  const failure = error as SMTPError
  const code = failure.responseCode
  if (typeof code === 'number' && code >= 500) return new ChannelSendError(`The SMTP server refused the mail: ${failure.response ?? failure.message}`, false)
  if (typeof code === 'number') return new ChannelSendError(`The SMTP server asked to try later: ${failure.response ?? failure.message}`, true)
  return new ChannelSendError(`Sending the mail failed: ${failure.message ?? String(error)}`, true)
}

async function send(kernel: ChannelKernel, endpoint: ChannelEndpoint<'email'>, rawTarget: Record<string, unknown>, text: string, attachments: Mail.Attachment[] = []): Promise<void> {
  try {
    const mail = { ...composeAnswer(endpoint, readTarget(rawTarget), text), ...(attachments.length ? { attachments } : {}) }
    const server = await mailServer(kernel, endpoint, 'smtp')
    // Loaded with the first answer sent by mail, not at start-up.
    const { createTransport } = await import('nodemailer')
    const transport = createTransport({
      host: server.address,
      port: server.port,
      secure: server.secure,
      auth: { user: server.user, pass: server.password },
      tls: server.servername ? { servername: server.servername } : {},
      connectionTimeout: CONNECT_TIMEOUT_MS,
      greetingTimeout: CONNECT_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    })
    try {
      await transport.sendMail(mail)
    } finally {
      transport.close()
    }
  } catch (error) {
    throw sendError(error)
  }
}

/** Answers go out over the agent's SMTP server; mail is fetched (IMAP), so there is no webhook to report. */
export function emailDriver(kernel: ChannelKernel): ChannelDriver<'email'> {
  return {
    platform: 'email',
    maxLength: MAIL_MAX_LENGTH,
    send: (endpoint, target, text) => send(kernel, endpoint, target, text),
    // The answer has gone as a mail of its own: its spoken part follows in the thread, attached.
    sendVoice: (endpoint, target, voice) =>
      send(kernel, endpoint, target, 'The answer above, spoken, is attached.', [{ filename: voice.filename, content: Buffer.from(voice.bytes), contentType: voice.mediaType }]),
  }
}
