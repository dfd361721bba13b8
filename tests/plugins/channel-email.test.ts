import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type Mail from 'nodemailer/lib/mailer'
import { senderVerified } from '../../plugins/channel-email/authentication.ts'
import { ATTACHMENT_BUDGET, ATTACHMENTS_KEPT, readMail } from '../../plugins/channel-email/inbound.ts'
import { newText } from '../../plugins/channel-email/new-text.ts'
import { composeAnswer, emailDriver, sendError } from '../../plugins/channel-email/outbound.ts'
import { DEFAULT_POLL_SECONDS, pollInterval } from '../../plugins/channel-email/poller.ts'
import { MailSettingsError } from '../../plugins/channel-email/servers.ts'
import { readTarget } from '../../plugins/channel-email/target.ts'
import { jsonb } from '../../src/db/jsonb.ts'
import { silentLogger } from '../../src/logger.ts'
import { ChannelSendError, type ChannelEndpoint, type ChannelKernel, type InboundMessage } from '../../src/plugin-host/sdk.ts'
import { composeMail, HAS_DOVECOT, startImapServer, startSmtpServer, warnWithoutDovecot, type ImapServer, type SmtpServer } from '../fixtures/channels/mail-servers.ts'
import { docxWithText, pdfWithText, pngImage } from '../helpers/documents.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

const AUTHSERV = 'mx.mail.test'
const EMAIL = {
  account: 'helpdesk@mail.test',
  sender_name: 'Helpdesk',
  from_alias: 'support@mail.test',
  signature: 'The helpdesk team',
  password_secret: 'mail/password',
  authserv_id: AUTHSERV,
}

let serial = 0
const newMessageId = (domain = 'example.org') => `<${Date.now().toString(36)}.${serial++}@${domain}>`
/** What the agent's own mail server writes on top of a mail whose From domain signed it. */
const authenticated = (domain = 'example.org') =>
  `Authentication-Results: ${AUTHSERV}; spf=pass smtp.mailfrom=${domain}; dkim=pass (2048-bit key) header.d=${domain} header.s=sel1; dmarc=pass (p=reject) header.from=${domain}`

async function read(options: Mail.Options, prepend: string[] = [authenticated()], email: ChannelEndpoint['email'] = EMAIL) {
  const result = await readMail(await composeMail({ to: EMAIL.account, date: new Date('2026-03-02T10:00:00Z'), ...options }, prepend), email)
  if ('skipped' in result) throw new Error(`skipped: ${result.skipped}`)
  return result.message
}

describe('reading a mail', () => {
  test('a new mail starts a thread keyed by its own Message-ID, answered to its sender with Re: and threading headers', async () => {
    const messageId = newMessageId()
    const message = await read({ from: 'Ann Example <Ann@Example.org>', subject: 'Quarterly figures', text: 'Where are the Q3 numbers?', messageId })
    expect(message).toEqual({
      // With the sender: another who saw the Message-ID cannot have this mail dropped as seen.
      deliveryId: `ann@example.org ${messageId}`,
      sender: { id: 'ann@example.org', displayName: 'Ann Example', verified: true },
      // The composer lower-cases the domain; the local part is the sender's own and kept as written.
      thread: { key: messageId, target: { to: 'Ann@example.org', subject: 'Re: Quarterly figures', in_reply_to: messageId, references: [messageId] } },
      text: 'Where are the Q3 numbers?',
    })
  })

  test('a reply joins the thread of the first mail its References name; the answer goes to From, never Reply-To; Re: is not doubled', async () => {
    const [first, second, third] = [newMessageId(), newMessageId('mail.test'), newMessageId()]
    const message = await read({
      from: 'ann@example.org',
      replyTo: 'Ann at home <ann.home@example.net>',
      subject: 'RE: Quarterly figures',
      text: 'And Q4?',
      messageId: third,
      inReplyTo: second,
      references: [first, second],
    })
    expect(message.thread).toEqual({
      key: first,
      target: { to: 'ann@example.org', subject: 'RE: Quarterly figures', in_reply_to: third, references: [first, second, third] },
    })
  })

  test('without References the thread is the one In-Reply-To names', async () => {
    const answered = newMessageId('mail.test')
    const message = await read({ from: 'ann@example.org', subject: 'Re: x', text: 'y', messageId: newMessageId(), inReplyTo: answered })
    expect(message.thread.key).toBe(answered)
  })

  test('a long chain of References keeps its first id (the thread key) and the latest ones', async () => {
    const chain = Array.from({ length: 40 }, () => newMessageId())
    const messageId = newMessageId()
    const message = await read({ from: 'ann@example.org', subject: 'Re: x', text: 'y', messageId, references: chain })
    const references = message.thread.target.references as string[]
    expect(references).toHaveLength(20)
    expect(references[0]).toBe(chain[0]!)
    expect(references.at(-1)).toBe(messageId)
    expect(message.thread.key).toBe(chain[0]!)
  })

  test('a mail without Message-ID is known by the hash of its bytes: the same bytes, the same delivery', async () => {
    const source = Buffer.from(`From: ann@example.org\r\nTo: ${EMAIL.account}\r\nSubject: no id\r\n\r\nhello\r\n`)
    const [once, again] = await Promise.all([readMail(source, EMAIL), readMail(source, EMAIL)])
    expect('message' in once && once.message.deliveryId).toMatch(/^ann@example\.org sha256:[0-9a-f]{64}$/)
    expect('message' in again && again.message.deliveryId).toBe('message' in once ? once.message.deliveryId : '')
    expect('message' in once && once.message.thread.target).toEqual({ to: 'ann@example.org', subject: 'Re: no id', references: [] })
  })

  test('an HTML-only mail is read as text, and the quoted history below a reply is left out', async () => {
    const message = await read({
      from: 'ann@example.org',
      subject: 'Re: x',
      messageId: newMessageId(),
      html: '<p>Thanks, <b>that works</b>.</p><div>On Mon, 2 Mar 2026 at 10:00, Helpdesk &lt;support@mail.test&gt; wrote:</div><blockquote>Echo: earlier</blockquote>',
    })
    expect(message.text).toBe('Thanks, that works.')
  })

  test('a mail that says it all in its subject is read by its subject', async () => {
    const message = await read({ from: 'ann@example.org', subject: 'Today’s figures?', text: '', messageId: newMessageId() })
    expect(message.text).toBe('Today’s figures?')
  })

  test('attachments come as name and base64; pictures the HTML shows inline do not', async () => {
    const pdf = pdfWithText(['Revenue grew 12 percent'])
    const message = await read({
      from: 'ann@example.org',
      subject: 'report',
      messageId: newMessageId(),
      html: '<p>See attached.</p><img src="cid:logo@example.org">',
      attachments: [
        { filename: 'report.pdf', content: Buffer.from(pdf) },
        { filename: 'logo.png', content: Buffer.from(pngImage()), cid: 'logo@example.org' },
      ],
    })
    expect(message.attachments).toEqual([{ name: 'report.pdf', base64: Buffer.from(pdf).toString('base64') }])
  })

  test('an attachment without a file name is named by its place', async () => {
    const source = [
      'From: ann@example.org',
      `To: ${EMAIL.account}`,
      'Subject: unnamed',
      `Message-ID: ${newMessageId()}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'See attached.',
      '--b',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('no name given').toString('base64'),
      '--b--',
      '',
    ].join('\r\n')
    const result = await readMail(Buffer.from(source), EMAIL)
    expect('message' in result && result.message.attachments).toEqual([{ name: 'attachment-1', base64: Buffer.from('no name given').toString('base64') }])
  })

  test(`attachments are read up to ${ATTACHMENT_BUDGET / 1024 / 1024} MiB in all; the agent is told of those left out`, async () => {
    const big = Buffer.alloc(12 * 1024 * 1024, 'a')
    const message = await read({
      from: 'ann@example.org',
      subject: 'two big files',
      text: 'Both, please.',
      messageId: newMessageId(),
      attachments: [
        { filename: 'first.txt', content: big },
        { filename: 'second.txt', content: big },
        { filename: 'small.txt', content: 'small' },
      ],
    })
    expect(message.attachments?.map((a) => a.name)).toEqual(['first.txt', 'small.txt'])
    expect(message.text).toStartWith('Both, please.\n\n')
    expect(message.text).toContain('second.txt (12.0 MiB) was not read')
  })

  test(`at most ${ATTACHMENTS_KEPT} attachments are handed on; the agent is told of the others`, async () => {
    const attachments = Array.from({ length: ATTACHMENTS_KEPT + 2 }, (_, i) => ({ filename: `part${i + 1}.txt`, content: `part ${i + 1}` }))
    const message = await read({ from: 'ann@example.org', subject: 'many', text: 'All of them.', messageId: newMessageId(), attachments })
    expect(message.attachments?.map((a) => a.name)).toEqual(attachments.slice(0, ATTACHMENTS_KEPT).map((a) => a.filename))
    expect(message.text).toContain(`part${ATTACHMENTS_KEPT + 1}.txt was not read: at most ${ATTACHMENTS_KEPT} attachments`)
    expect(message.text).toContain(`part${ATTACHMENTS_KEPT + 2}.txt was not read`)
  })

  test('of a mail too large to fetch whole, the start is read and no attachment', async () => {
    const source = await composeMail({ from: 'ann@example.org', to: EMAIL.account, subject: 'huge', text: 'Read this part.', messageId: newMessageId(), attachments: [{ filename: 'a.txt', content: 'x'.repeat(5000) }] })
    const start = source.subarray(0, source.indexOf('Read this part.') + 200)
    const result = await readMail(start, EMAIL, 60 * 1024 * 1024)
    if (!('message' in result)) throw new Error('expected a message')
    expect(result.message.attachments).toBeUndefined()
    expect(result.message.text).toContain('Read this part.')
    expect(result.message.text).toContain('too large (60.0 MiB)')
  })

  test.each([
    ['an autoresponder (Auto-Submitted)', { headers: { 'Auto-Submitted': 'auto-replied' } }, 'sent automatically'],
    ['a bulk mail (Precedence)', { headers: { Precedence: 'bulk' } }, 'sent in bulk'],
    ['a mailing list (List-Id)', { headers: { 'List-Id': 'Team <team.lists.example.org>' } }, 'mailing list'],
    ['a bounce (empty Return-Path)', { headers: { 'Return-Path': '<>' } }, 'bounce'],
    ['a mail system', { from: 'MAILER-DAEMON@example.org' }, 'mail system'],
    ['the agent itself', { from: EMAIL.from_alias }, 'own address'],
    ['the agent’s account', { from: 'HELPDESK@mail.test' }, 'own address'],
  ] as const)('a mail from %s is left alone: answering it could loop', async (_, options, reason) => {
    const source = await composeMail({ from: 'ann@example.org', to: EMAIL.account, subject: 's', text: 't', messageId: newMessageId(), ...options }, [authenticated()])
    expect(await readMail(source, EMAIL)).toEqual({ skipped: expect.stringContaining(reason) })
  })

  test('Auto-Submitted: no is a person’s mail', async () => {
    const message = await read({ from: 'ann@example.org', subject: 's', text: 't', messageId: newMessageId(), headers: { 'Auto-Submitted': 'no' } })
    expect(message.text).toBe('t')
  })

  test('a mail without a From address is left alone', async () => {
    const source = Buffer.from(`To: ${EMAIL.account}\r\nSubject: nobody\r\nMessage-ID: ${newMessageId()}\r\n\r\nhello\r\n`)
    expect(await readMail(source, EMAIL)).toEqual({ skipped: 'it has no From address' })
  })
})

describe('who sent it', () => {
  const from = { from: 'ann@example.org', subject: 's', text: 't' }
  const verified = async (prepend: string[], email: ChannelEndpoint['email'] = EMAIL, options: Mail.Options = from) =>
    (await read({ ...options, messageId: newMessageId() }, prepend, email)).sender.verified

  test('dmarc=pass from the configured server vouches for the From address', async () => {
    expect(await verified([`Authentication-Results: ${AUTHSERV}; dmarc=pass header.from=example.org`])).toBe(true)
  })

  test('dkim=pass with the From domain as signer vouches too; the server name matches whatever its case', async () => {
    expect(await verified([`Authentication-Results: MX.Mail.Test; dkim=pass header.d=EXAMPLE.org`])).toBe(true)
  })

  test('a folded header with comments, quoted values and a version is read', async () => {
    const header = `Authentication-Results: ${AUTHSERV} 1 (the mailbox's server);\r\n\tspf=none (no record) smtp.mailfrom="ann@example.org";\r\n\tdkim=pass (good; signature) reason="valid; checked" header.d="example.org"`
    expect(await verified([header])).toBe(true)
  })

  test.each([
    ['no Authentication-Results at all', []],
    ['another server’s header, however good', ['Authentication-Results: mx.attacker.example; dkim=pass header.d=example.org; dmarc=pass']],
    ['a forged passing header below the server’s own failing one', [`Authentication-Results: ${AUTHSERV}; dkim=fail header.d=example.org; dmarc=fail`, authenticated()]],
    ['dkim=pass signed by another domain', [`Authentication-Results: ${AUTHSERV}; dkim=pass header.d=attacker.example; dmarc=fail`]],
    ['dkim=pass by a parent domain only', [`Authentication-Results: ${AUTHSERV}; dkim=pass header.d=org`]],
    ['dmarc=pass for another From domain', [`Authentication-Results: ${AUTHSERV}; dmarc=pass header.from=attacker.example`]],
    ['dmarc=pass that does not say for which From', [`Authentication-Results: ${AUTHSERV}; dmarc=pass`]],
    ['the words in a comment', [`Authentication-Results: ${AUTHSERV}; dkim=fail (would be dkim=pass header.d=example.org) header.d=example.org`]],
    ['a server that reports nothing', [`Authentication-Results: ${AUTHSERV}; none`]],
    ['spf=pass alone (it vouches for the envelope, not the From)', [`Authentication-Results: ${AUTHSERV}; spf=pass smtp.mailfrom=example.org`]],
  ])('no vouching with %s', async (_, prepend) => {
    expect(await verified(prepend)).toBe(false)
  })

  test('without an authserv_id in the settings, nobody is vouched for', async () => {
    expect(await verified([authenticated()], { ...EMAIL, authserv_id: undefined })).toBe(false)
  })

  test('a mail naming several From addresses is vouched for by none', async () => {
    expect(await verified([authenticated()], EMAIL, { ...from, from: ['ann@example.org', 'bob@example.org'] })).toBe(false)
  })

  test('senderVerified wants the From domain', () => {
    expect(senderVerified([authenticated().slice('Authentication-Results:'.length)], AUTHSERV, undefined)).toBe(false)
    expect(senderVerified([authenticated().slice('Authentication-Results:'.length)], AUTHSERV, 'example.org')).toBe(true)
  })
})

describe('the new text of a mail', () => {
  test.each([
    ['an attribution line and the quote below', 'Sounds good.\n\nOn Mon, 2 Mar 2026 at 10:00, Helpdesk <support@mail.test> wrote:\n> Echo: hi\n> more', 'Sounds good.'],
    ['an attribution wrapped onto two lines', 'Yes.\n\nOn Mon, 2 Mar 2026 at 10:00, Helpdesk <\nsupport@mail.test> wrote:\n\n> Echo: hi', 'Yes.'],
    ['Outlook’s separator', 'Fine.\r\n\r\n-----Original Message-----\r\nFrom: Helpdesk\r\nSent: Monday', 'Fine.'],
    ['the sender’s signature', 'link K7M2Q-9XW4T\n-- \nAnn Example\nSales', 'link K7M2Q-9XW4T'],
    ['quoted lines at the end', 'Agreed.\n\n> Echo: hi\n> there\n', 'Agreed.'],
  ])('drops %s', (_, text, expected) => {
    expect(newText(text)).toBe(expected)
  })

  test('keeps quotes answered in between, and a mail that is nothing but a quote', () => {
    expect(newText('> Is it Tuesday?\nYes.\n> And the room?\nRoom 4.')).toBe('> Is it Tuesday?\nYes.\n> And the room?\nRoom 4.')
    expect(newText('> only a quote')).toBe('> only a quote')
  })

  test('a sentence that merely starts with On stays', () => {
    expect(newText('On Monday I am out.\nPlease write to Bob.')).toBe('On Monday I am out.\nPlease write to Bob.')
  })
})

describe('sending an answer', () => {
  const endpoint = { agentId: 'a', companyId: 'c', agentName: 'helpdesk', platform: 'email', settings: { enabled: true, unknown_senders: 'invite' }, email: EMAIL, secret: async () => 'pw' } as ChannelEndpoint<'email'>
  const target = { to: 'ann@example.org', subject: 'Re: x', in_reply_to: '<1@example.org>', references: ['<0@example.org>', '<1@example.org>'] }

  test('is a mail from the sender name and alias, in the thread, signed, with a Message-ID of the agent’s domain', () => {
    const mail = composeAnswer(endpoint, target, 'Echo: x')
    expect(mail).toMatchObject({
      from: { name: 'Helpdesk', address: 'support@mail.test' },
      to: 'ann@example.org',
      subject: 'Re: x',
      text: 'Echo: x\n\n-- \nThe helpdesk team',
      inReplyTo: '<1@example.org>',
      references: ['<0@example.org>', '<1@example.org>'],
      headers: { 'Auto-Submitted': 'auto-replied' },
    })
    expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@mail\.test>$/)
  })

  test('without alias, name and signature: the account, the agent’s name, the bare answer', () => {
    const bare = { ...endpoint, email: { account: 'helpdesk@mail.test' } }
    expect(composeAnswer(bare, target, 'Echo: x')).toMatchObject({ from: { name: 'helpdesk', address: 'helpdesk@mail.test' }, text: 'Echo: x' })
    expect(() => composeAnswer({ ...endpoint, email: {} }, target, 'x')).toThrow(MailSettingsError)
  })

  test('a target this plugin did not write is refused for good; line breaks never reach a header', () => {
    for (const bad of [{}, { to: 'a@b.c', subject: 's' }, { to: 1, subject: 's', references: [] }, { to: 'a@b.c', subject: 's', references: [1] }]) {
      expect(() => readTarget(bad)).toThrow(ChannelSendError)
    }
    expect(readTarget({ to: 'a@b.c', subject: 'Re: x\r\nBcc: victim@example.org', in_reply_to: '<1@x>\n', references: ['<0@x>\r\nX: y'] })).toEqual({
      to: 'a@b.c',
      subject: 'Re: x Bcc: victim@example.org',
      in_reply_to: '<1@x>',
      references: ['<0@x> X: y'],
    })
  })

  test.each([
    ['a 4xx reply (try later)', 'retried', Object.assign(new Error('Message failed'), { responseCode: 451, response: '451 4.3.0 Try again later' }), true],
    ['a connection that failed', 'retried', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ESOCKET' }), true],
    ['a 5xx reply (refused)', 'not retried', Object.assign(new Error('Message failed'), { responseCode: 550, response: '550 5.1.1 User unknown' }), false],
    ['refused credentials', 'not retried', Object.assign(new Error('Invalid login'), { responseCode: 535, code: 'EAUTH' }), false],
    ['settings that lack the server', 'not retried', new MailSettingsError('no SMTP server'), false],
  ])('%s is %s', (_, __, error, retryable) => {
    const mapped = sendError(error)
    expect(mapped).toBeInstanceOf(ChannelSendError)
    expect(mapped.retryable).toBe(retryable)
  })

  test('a mail server the outbound policy refuses at send time is not connected to', async () => {
    const refusing = { resolveAllowed: async (host: string) => Promise.reject(new Error(`${host} resolves to 10.0.0.5, a private address`)) } as unknown as ChannelKernel
    const driver = emailDriver(refusing)
    const withSmtp = { ...endpoint, email: { ...EMAIL, smtp: { host: 'smtp.mail.test', port: 465, secure: true } } }
    const failure = await driver.send(withSmtp, target, 'x').catch((error: ChannelSendError) => error)
    expect(failure).toBeInstanceOf(ChannelSendError)
    expect((failure as ChannelSendError).message).toContain('resolves to 10.0.0.5')
  })

  test('the driver takes an answer whole: mail has no length limit to cut to', () => {
    expect(emailDriver({} as ChannelKernel)).toMatchObject({ platform: 'email', maxLength: 100_000 })
  })
})

test('poll_seconds takes decimals; what is not a positive number falls back to the default', () => {
  expect(pollInterval('0.2', silentLogger)).toBe(200)
  expect(pollInterval('45', silentLogger)).toBe(45_000)
  for (const bad of [undefined, '', 'soon', '0', '-3', 'Infinity']) expect(pollInterval(bad, silentLogger)).toBe(DEFAULT_POLL_SECONDS * 1000)
})

// ——— With real servers: Dovecot holds the agent's mailbox, an SMTP server takes its answers. ———

warnWithoutDovecot()
const live = test.skipIf(!HAS_DOVECOT)
const MAILBOX = { user: EMAIL.account, password: 'mailbox-password-for-tests' }
let imap: ImapServer
let smtp: SmtpServer
const provider = startFakeOpenAI()
let p: TestPlatform
let agent: string

beforeAll(async () => {
  if (!HAS_DOVECOT) return
  ;[imap, smtp] = await Promise.all([startImapServer(MAILBOX), startSmtpServer(MAILBOX)])
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_CHANNEL_EMAIL_POLL_SECONDS: '0.2', SWITCHBOARD_CHANNEL_RETRY_MS: '20', SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8', ...openAIRunnerEnv(provider) })
  const secret = await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name: 'mail/password', value: MAILBOX.password } })
  expect(secret.status).toBeLessThan(300)
  agent = await createAgent('helpdesk', mailSettings())
})
afterAll(async () => {
  provider.stop()
  if (!HAS_DOVECOT) return
  try {
    await p?.close()
  } finally {
    await Promise.all([imap?.close(), smtp?.close()])
  }
})

function mailSettings(overrides: Record<string, unknown> = {}) {
  return { ...EMAIL, imap: { host: '127.0.0.1', port: imap.port, secure: false }, smtp: { host: '127.0.0.1', port: smtp.port, secure: false }, ...overrides }
}

async function createAgent(name: string, email: Record<string, unknown>, channel: Record<string, unknown> = {}): Promise<string> {
  const reply = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1', email, channels: { email: channel } } })
  expect(reply.status).toBe(201)
  return reply.body.id
}

/** Switches an agent's email channel off: it stops looking into the mailbox the tests share. */
async function switchOff(agentId: string): Promise<void> {
  expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agentId}`, { json: { channels: { email: { enabled: false } } } })).status).toBe(200)
}

let people = 0
/** A member of the company whose address is linked to them: whom the agent answers. */
async function linkedSender(): Promise<{ address: string; user: Principal }> {
  const user = await p.createUser()
  const address = `person${people++}.${Date.now().toString(36)}@example.org`
  const reply = await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: user.userId, platform: 'email', platform_user_id: address } })
  expect(reply.status).toBe(201)
  return { address, user }
}

/** A mail arriving in the agent's mailbox, with the header the agent's mail server adds on top. */
async function deliver(options: Mail.Options, prepend: string[] = [authenticated()]): Promise<void> {
  await imap.append(await composeMail({ to: EMAIL.account, date: new Date(), ...options }, prepend))
}

const answersTo = (address: string) => smtp.sent.filter((mail) => mail.to.includes(address.toLowerCase()))

async function answerTo(address: string, count = 1, what = 'the answer to reach the SMTP server') {
  return until(() => (answersTo(address).length >= count ? answersTo(address) : undefined), { what, timeoutMs: 15_000 })
}

async function seen(messageId: string, copies = 1) {
  await until(async () => (await imap.mails()).filter((mail) => mail.messageId === messageId && mail.seen).length >= copies, { what: `${messageId} to be marked seen`, timeoutMs: 15_000 })
}

const inboxRows = (deliveryId: string, agentId = agent) =>
  p.store.db.selectFrom('channel_inbox').select(['id', 'status', 'message']).where('agent_id', '=', agentId).where('delivery_id', 'like', `% ${deliveryId}`).execute()

async function conversationsWithAgent(user: Principal) {
  const reply = await p.call('GET', '/api/chat/conversations', { as: user })
  expect(reply.status).toBe(200)
  return (reply.body.data as Array<{ id: string; agent_id: string | null; title: string }>).filter((c) => c.agent_id === agent)
}

async function messagesOf(conversation: string, user: Principal): Promise<Array<{ role: string; text: string }>> {
  const reply = await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&order=id.asc&limit=100`, { as: user })
  expect(reply.status).toBe(200)
  return reply.body.data.map((m: { role: string; text: string }) => ({ role: m.role, text: m.text }))
}

async function emailState(agentId = agent) {
  const reply = await p.call('GET', `/api/agents/${agentId}/channels`)
  expect(reply.status).toBe(200)
  return reply.body.data.find((state) => state.platform === 'email')!
}

describe('a mail in the agent’s mailbox', () => {
  let thread: { address: string; user: Principal; first: string; answer: string }

  live('is answered by mail in its thread: to the sender, Re:, In-Reply-To and References, from the alias, signed', async () => {
    const { address, user } = await linkedSender()
    const first = newMessageId()
    await deliver({ from: `Ann Example <${address}>`, subject: 'Quarterly figures', text: 'Where are the Q3 numbers?', messageId: first })
    const [answer] = await answerTo(address)
    expect(answer!.user).toBe(MAILBOX.user)
    expect(answer!.from).toBe(EMAIL.from_alias)
    expect(answer!.mail.from?.value).toEqual([{ address: EMAIL.from_alias, name: EMAIL.sender_name }])
    expect(answer!.mail.to).toMatchObject({ value: [{ address }] })
    expect(answer!.mail.subject).toBe('Re: Quarterly figures')
    expect(answer!.mail.inReplyTo).toBe(first)
    expect([answer!.mail.references].flat()).toEqual([first])
    expect(answer!.mail.text?.trimEnd()).toBe(`Echo: Where are the Q3 numbers?\n\n-- \n${EMAIL.signature}`)
    expect(answer!.mail.messageId).toMatch(/@mail\.test>$/)
    expect(answer!.mail.headers.get('auto-submitted')).toBe('auto-replied')
    await seen(first)
    thread = { address, user, first, answer: answer!.mail.messageId! }
  })

  live('a reply in that thread continues the same conversation, its quoted history left out', async () => {
    const { address, user, first, answer } = thread
    const second = newMessageId()
    await deliver({
      from: `Ann Example <${address}>`,
      subject: 'Re: Quarterly figures',
      text: `And Q4?\n\nOn ${new Date().toUTCString()}, Helpdesk <${EMAIL.from_alias}> wrote:\n> Echo: Where are the Q3 numbers?`,
      messageId: second,
      inReplyTo: answer,
      references: [first, answer],
    })
    const answers = await answerTo(address, 2, 'the second answer')
    const latest = answers[1]!.mail
    expect(latest.subject).toBe('Re: Quarterly figures')
    expect(latest.inReplyTo).toBe(second)
    expect([latest.references].flat()).toEqual([first, answer, second])
    expect(latest.text?.trimEnd()).toBe(`Echo: And Q4?\n\n-- \n${EMAIL.signature}`)
    const conversations = await conversationsWithAgent(user)
    expect(conversations).toHaveLength(1)
    expect(await messagesOf(conversations[0]!.id, user)).toEqual([
      { role: 'user', text: 'Where are the Q3 numbers?' },
      { role: 'agent', text: 'Echo: Where are the Q3 numbers?' },
      { role: 'user', text: 'And Q4?' },
      { role: 'agent', text: 'Echo: And Q4?' },
    ])
  })

  live('a new mail (no References) from the same person starts another conversation', async () => {
    const { address, user } = thread
    await deliver({ from: address, subject: 'Another matter', text: 'Holiday dates?', messageId: newMessageId() })
    await answerTo(address, 3, 'the answer to the new mail')
    expect(await conversationsWithAgent(user)).toHaveLength(2)
  })

  live('the same Message-ID delivered twice is answered once', async () => {
    const { address } = await linkedSender()
    const messageId = newMessageId()
    const source = await composeMail({ from: address, to: EMAIL.account, subject: 'Twice', text: 'Only once, please.', messageId }, [authenticated()])
    await imap.append(source)
    await imap.append(source)
    await seen(messageId, 2)
    await answerTo(address)
    // Both copies were handed over before they were marked seen: one delivery was kept, and one answer queued.
    expect(await inboxRows(messageId)).toHaveLength(1)
    const outbox = await p.store.db.selectFrom('channel_outbox').select('id').where('agent_id', '=', agent).where('thread_key', '=', messageId).execute()
    expect(outbox).toHaveLength(1)
    expect(answersTo(address)).toHaveLength(1)
  })

  live('a long answer goes out whole, as one mail', async () => {
    const { address } = await linkedSender()
    const text = Array.from({ length: 1500 }, (_, i) => `word${i}`).join(' ')
    await deliver({ from: address, subject: 'Long', text, messageId: newMessageId() })
    const [answer] = await answerTo(address)
    expect(answer!.mail.text?.trimEnd()).toBe(`Echo: ${text}\n\n-- \n${EMAIL.signature}`)
    expect(answersTo(address)).toHaveLength(1)
  })

  live('attachments (PDF, DOCX, TXT) become documents of the conversation, which the agent reads', async () => {
    const { address, user } = await linkedSender()
    await deliver({
      from: address,
      subject: 'Documents',
      text: '/quote Revenue grew',
      messageId: newMessageId(),
      attachments: [
        { filename: 'report.pdf', content: Buffer.from(pdfWithText(['Revenue grew 12 percent in March'])) },
        { filename: 'notes.docx', content: Buffer.from(docxWithText(['Meeting notes: hire two engineers'])) },
        { filename: 'todo.txt', content: 'Order more coffee' },
      ],
    })
    const [answer] = await answerTo(address)
    expect(answer!.mail.text).toContain('Quoted: Revenue grew 12 percent in March')
    const [conversation] = await conversationsWithAgent(user)
    const documents = await p.call('GET', `/api/v1/WebchatDocument?conversation_id=eq.${conversation!.id}&order=filename.asc`, { as: user })
    expect(documents.body.data.map((d: { filename: string; media_type: string }) => [d.filename, d.media_type])).toEqual([
      ['notes.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
      ['report.pdf', 'application/pdf'],
      ['todo.txt', 'text/plain'],
    ])
    const texts = await p.store.db.selectFrom('webchat_documents').select(['filename', 'extracted_text']).where('conversation_id', '=', conversation!.id).orderBy('filename').execute()
    expect(texts.map((t) => t.extracted_text.trim())).toEqual(['Meeting notes: hire two engineers', expect.stringContaining('Revenue grew 12 percent in March'), 'Order more coffee'])
  })

  live('an attachment that is no document is named back, and the rest is answered', async () => {
    const { address } = await linkedSender()
    await deliver({ from: address, subject: 'Program', text: 'Run this', messageId: newMessageId(), attachments: [{ filename: 'setup.exe', content: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0]) }] })
    const answers = await answerTo(address, 2, 'the notice and the answer')
    const texts = answers.map((a) => a.mail.text ?? '')
    expect(texts.some((t) => t.includes('Not read: setup.exe'))).toBe(true)
    expect(texts.some((t) => t.startsWith('Echo: Run this'))).toBe(true)
  })

  test.skipIf(!HAS_DOVECOT || !HAS_SPEECH_TOOLS)('a voice note attached is heard, and the spoken answer follows the written one as an OGG/Opus attachment', async () => {
    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { voice: { enabled: true, provider: 'openai' } } })).status).toBe(200)
    try {
      const { address } = await linkedSender()
      const note = speech('what time is lunch')
      provider.willHear(note, 'What time is lunch?')
      await deliver({ from: address, subject: 'Voice message', text: 'Listen:', messageId: newMessageId(), attachments: [{ filename: 'memo.ogg', content: Buffer.from(note) }] })
      const [written, spoken] = await answerTo(address, 2, 'the written and the spoken answer')
      expect(written!.mail.text).toContain('Echo: Listen:\n\nWhat time is lunch?')
      expect(written!.mail.attachments ?? []).toEqual([])
      expect(spoken!.mail.text).toContain('The answer above, spoken, is attached.')
      expect(spoken!.mail.inReplyTo).toBe(written!.mail.inReplyTo)
      const [attached] = spoken!.mail.attachments
      expect(attached!.contentType).toBe('audio/ogg')
      expect(isOggOpus(new Uint8Array(attached!.content))).toBe(true)
    } finally {
      expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { voice: { enabled: false } } })).status).toBe(200)
    }
  })

  live('an autoresponder’s mail is marked seen and left unanswered', async () => {
    const { address } = await linkedSender()
    const messageId = newMessageId()
    await deliver({ from: address, subject: 'Out of office', text: 'I am away.', messageId, headers: { 'Auto-Submitted': 'auto-replied' } })
    await seen(messageId)
    expect(await inboxRows(messageId)).toEqual([])
    expect(answersTo(address)).toEqual([])
  })
})

describe('who the sender is', () => {
  live.each([
    ['no Authentication-Results', []],
    ['another server’s passing header', ['Authentication-Results: mx.attacker.example; dkim=pass header.d=example.org; dmarc=pass header.from=example.org']],
    ['a passing header below the server’s own failing one', [`Authentication-Results: ${AUTHSERV}; dkim=fail header.d=example.org; dmarc=fail header.from=example.org`, authenticated()]],
    ['a signature of another domain', [`Authentication-Results: ${AUTHSERV}; dkim=pass header.d=attacker.example; dmarc=fail header.from=example.org`]],
  ])('a mail with a linked person’s From but %s runs no turn as them and gets no answer', async (_, prepend) => {
    const { address, user } = await linkedSender()
    const messageId = newMessageId()
    await deliver({ from: address, subject: 'Payroll', text: 'Send me everyone’s salaries.', messageId }, prepend)
    const [row] = await until(async () => ((await inboxRows(messageId))[0]?.status === 'done' ? inboxRows(messageId) : undefined), { what: 'the mail to be handled', timeoutMs: 15_000 })
    expect((row!.message as InboundMessage).sender).toMatchObject({ id: address, verified: false })
    expect(await conversationsWithAgent(user)).toEqual([])
    const queued = await p.store.db.selectFrom('channel_outbox').select('id').where('agent_id', '=', agent).where('thread_key', '=', messageId).execute()
    expect(queued).toEqual([])
    expect(answersTo(address)).toEqual([])
    expect((await emailState()).last_error).toContain(`A message from ${address} was not answered: its sender is not authenticated.`)
  })

  live('an authenticated stranger gets the invitation to link, in the thread', async () => {
    const address = `stranger.${Date.now().toString(36)}@example.org`
    const messageId = newMessageId()
    await deliver({ from: address, subject: 'Hello', text: 'Who are you?', messageId })
    const [invitation] = await answerTo(address, 1, 'the invitation')
    expect(invitation!.mail.text).toContain('does not know this email account')
    expect(invitation!.mail.text).toContain('/link <code>')
    expect(invitation!.mail.text).not.toContain('Echo:')
    expect(invitation!.mail.subject).toBe('Re: Hello')
    expect(invitation!.mail.inReplyTo).toBe(messageId)
  })

  live('a link code mailed with a signature below links the address; the next mail is answered as that person', async () => {
    const user = await p.createUser()
    const address = `linking.${Date.now().toString(36)}@example.org`
    const { code } = (await p.call('POST', '/api/me/channel-links', { as: user })).body
    await deliver({ from: address, subject: 'Link', text: `link ${code}\n\n-- \nBea Example\nSales, example.org`, messageId: newMessageId() })
    const [linked] = await answerTo(address, 1, 'the link confirmation')
    expect(linked!.mail.text).toContain('Linked: this email account now speaks as')
    await deliver({ from: address, subject: 'Now', text: 'Now do you know me?', messageId: newMessageId() })
    const answers = await answerTo(address, 2, 'the answer as the linked person')
    expect(answers[1]!.mail.text).toStartWith('Echo: Now do you know me?')
    expect(await conversationsWithAgent(user)).toHaveLength(1)
  })
})

describe('when the answer cannot be sent', () => {
  live('a refused recipient (5xx) is not retried: the reply is kept as failed and the channel says why', async () => {
    const { address } = await linkedSender()
    smtp.refuseRecipient(address)
    const before = (await emailState()).failed_replies
    await deliver({ from: address, subject: 'Bounce', text: 'Answer me', messageId: newMessageId() })
    const state = await until(async () => {
      const now = await emailState()
      return now.failed_replies > before ? now : undefined
    }, { what: 'the reply to be failed', timeoutMs: 15_000 })
    expect(state.last_error).toContain('550')
    expect(state.last_error).toContain('User unknown')
    expect(smtp.attempts.filter((to) => to === address)).toHaveLength(1)
    expect(answersTo(address)).toEqual([])
  })

  live('a server that says “later” (4xx) twice and then takes the mail delivers it once', async () => {
    const { address } = await linkedSender()
    smtp.failNext(address, 2, 451)
    const messageId = newMessageId()
    await deliver({ from: address, subject: 'Greylisted', text: 'Patience', messageId })
    const [answer] = await answerTo(address)
    expect(answer!.mail.text).toStartWith('Echo: Patience')
    expect(smtp.attempts.filter((to) => to === address)).toHaveLength(3)
    // The server has the mail before the worker hears back and marks the row sent: wait for the row, not the mail.
    const row = await until(async () => {
      const [found] = await p.store.db.selectFrom('channel_outbox').select(['status', 'attempts']).where('agent_id', '=', agent).where('thread_key', '=', messageId).execute()
      return found?.status === 'pending' ? undefined : found
    }, { what: 'the outbox row to be settled' })
    expect(row).toEqual({ status: 'sent', attempts: 3 })
    expect(answersTo(address)).toHaveLength(1)
  })
})

describe('a mailbox that cannot be read', () => {
  live('a wrong password is shown on the channel, and nothing is read', async () => {
    const secret = await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name: 'mail/wrong', value: 'not-the-password' } })
    expect(secret.status).toBe(200)
    const id = await createAgent('wrong-password', mailSettings({ password_secret: 'mail/wrong' }))
    const state = await until(async () => ((await emailState(id)).last_error ? emailState(id) : undefined), { what: 'the login failure to be shown', timeoutMs: 15_000 })
    expect(state.last_error).toBe(`Reading the mailbox failed: the IMAP server refused the login of ${MAILBOX.user}: Authentication failed; check email.username and the password secret.`)
    await switchOff(id)
    expect(await p.store.db.selectFrom('channel_inbox').select('id').where('agent_id', '=', id).execute()).toEqual([])
  })

  live('a password secret missing from the vault is named', async () => {
    const id = await createAgent('no-secret', mailSettings({ password_secret: 'mail/missing' }))
    const state = await until(async () => ((await emailState(id)).last_error ? emailState(id) : undefined), { what: 'the missing secret to be shown', timeoutMs: 15_000 })
    expect(state.last_error).toContain('no secret named mail/missing')
    await switchOff(id)
  })

  live('a mail server in a refused range is refused when saved, and again when connecting', async () => {
    const refused = await p.call('POST', '/api/v1/AgentConfigRecord', {
      json: { name: 'metadata', runner: 'echo', model: 'echo-1', email: mailSettings({ imap: { host: '169.254.169.254', port: 143, secure: false } }), channels: { email: {} } },
    })
    expect(expectProblem(refused, 422, 'validation_error').errors?.[0]?.path).toBe('email.imap.host')
    // The setting changed behind the API's back (or its name now points elsewhere): the poller judges it again.
    // Off while its settings are bent, so that it never reads the mailbox the other agents share.
    const id = await createAgent('rebound', mailSettings(), { enabled: false })
    await p.store.db
      .updateTable('agent_configs')
      .set({ email: jsonb(mailSettings({ imap: { host: '169.254.169.254', port: 143, secure: false } })), channels: jsonb({ email: { enabled: true, unknown_senders: 'invite' } }) })
      .where('id', '=', id)
      .execute()
    const state = await until(async () => ((await emailState(id)).last_error?.includes('169.254.169.254') ? emailState(id) : undefined), { what: 'the refusal to be shown', timeoutMs: 15_000 })
    expect(state.last_error).toContain('SWITCHBOARD_OUTBOUND_ALLOW')
    // Its stored host would refuse any change now; removing it is allowed.
    expect((await p.call('DELETE', `/api/v1/AgentConfigRecord/${id}`)).status).toBe(204)
  })
})
