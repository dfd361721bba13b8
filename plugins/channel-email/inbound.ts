import type { Attachment, ParsedMail } from 'mailparser'
import type { ChannelEndpoint, InboundAttachment, InboundMessage } from '../../src/plugin-host/sdk.ts'
import { senderVerified } from './authentication.ts'
import { newText } from './new-text.ts'
import type { MailTarget } from './target.ts'

/**
 * Attachments of one mail are handed on up to this much in all, and this many: the kernel drops every attachment of
 * a message past either, so the first ones that fit are chosen here, and the agent told of the rest.
 */
export const ATTACHMENT_BUDGET = 20 * 1024 * 1024
export const ATTACHMENTS_KEPT = 20
/** References kept in an answer: the thread's first id (its key) and the latest ones, as RFC 5322 suggests. */
const REFERENCES_KEPT = 20

type AgentEmail = ChannelEndpoint['email']

/** A mail the agent answers, or why it is left alone (it is marked read all the same, so it is not read again). */
export type ReadMail = { message: InboundMessage } | { skipped: string }

/** The unfolded values of a header, topmost first, as the message carries them. */
function headerValues(parsed: ParsedMail, name: string): string[] {
  return parsed.headerLines
    .filter((header) => header.key === name)
    .map((header) => header.line.slice(header.line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim())
}

const mebibytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

const sha256 = (data: Uint8Array) => new Bun.CryptoHasher('sha256').update(data).digest('hex')

/** Answering an answering machine (a vacation notice, a bounce, a list) starts a loop of mail (RFC 3834). */
function automatic(parsed: ParsedMail): string | undefined {
  const submitted = headerValues(parsed, 'auto-submitted')[0]?.toLowerCase()
  // "no" (a person wrote it) may carry parameters or a comment: "no; reason=x", "no (typed by hand)".
  if (submitted && submitted.split(/[\s;(]/)[0] !== 'no') return `it was sent automatically (Auto-Submitted: ${submitted})`
  const precedence = headerValues(parsed, 'precedence')[0]?.toLowerCase()
  if (precedence && ['bulk', 'junk', 'list', 'auto_reply'].includes(precedence)) return `it was sent in bulk (Precedence: ${precedence})`
  if (headerValues(parsed, 'list-id').length > 0) return 'it came through a mailing list (List-Id)'
  // A bounce has the null reverse path (RFC 5321); answering it would bounce again.
  if (headerValues(parsed, 'return-path').some((path) => /^<\s*>$/.test(path))) return 'it is a bounce (empty Return-Path)'
  return undefined
}

function referencesOf(parsed: ParsedMail): string[] {
  const references = parsed.references ?? []
  return (typeof references === 'string' ? references.split(/\s+/) : references).filter((id) => id !== '')
}

/** The first id and the latest ones of a long chain. */
function shortened(ids: string[]): string[] {
  return ids.length <= REFERENCES_KEPT ? ids : [ids[0]!, ...ids.slice(-(REFERENCES_KEPT - 1))]
}

/** The attachments that fit the budget, and a line for the agent about each that did not. */
function attachmentsOf(parsed: ParsedMail, truncatedFrom: number | undefined): { attachments: InboundAttachment[]; notes: string[] } {
  if (truncatedFrom !== undefined) {
    return { attachments: [], notes: [`[The mail was too large (${mebibytes(truncatedFrom)} MiB): only its start was read, without attachments.]`] }
  }
  // Pictures a mail's HTML shows inline (logos, signatures) are part of its layout, not files sent.
  const sent = parsed.attachments.filter((attachment: Attachment) => !attachment.related)
  const attachments: InboundAttachment[] = []
  const notes: string[] = []
  let used = 0
  sent.forEach((attachment, index) => {
    const name = attachment.filename?.trim() || `attachment-${index + 1}`
    if (attachments.length === ATTACHMENTS_KEPT) {
      notes.push(`[Attachment ${name} was not read: at most ${ATTACHMENTS_KEPT} attachments are read per mail.]`)
      return
    }
    if (used + attachment.size > ATTACHMENT_BUDGET) {
      notes.push(`[Attachment ${name} (${mebibytes(attachment.size)} MiB) was not read: attachments are read up to ${mebibytes(ATTACHMENT_BUDGET)} MiB per mail.]`)
      return
    }
    used += attachment.size
    attachments.push({ name, base64: attachment.content.toString('base64') })
  })
  return { attachments, notes }
}

/**
 * Reads one mail of the agent's mailbox. `truncatedFrom` is the mail's size when only its start was fetched (it was
 * very large): its text is read, its attachments are not.
 */
export async function readMail(source: Buffer, email: AgentEmail, truncatedFrom?: number): Promise<ReadMail> {
  // Loaded with the first mail read, not at start-up: most deployments never receive mail.
  const { simpleParser } = await import('mailparser')
  const parsed = await simpleParser(source, { skipImageLinks: true, skipTextToHtml: true })
  const senders = (parsed.from?.value ?? []).filter((sender) => sender.address)
  const sender = senders[0]
  if (!sender?.address) return { skipped: 'it has no From address' }
  const address = sender.address.toLowerCase()
  const own = [email.account, email.from_alias].filter((a): a is string => a !== undefined).map((a) => a.toLowerCase())
  if (own.includes(address)) return { skipped: 'it is from the agent’s own address' }
  if (/^(mailer-daemon|postmaster)@/.test(address)) return { skipped: 'it is from a mail system' }
  const machine = automatic(parsed)
  if (machine) return { skipped: machine }

  const messageId = parsed.messageId?.trim() || undefined
  // The kernel keeps a long id (a Message-ID is the sender's to choose) as its hash.
  // With the sender: someone copied on a mail cannot send another under its Message-ID first and have it dropped.
  const deliveryId = `${address} ${messageId ?? `sha256:${sha256(source)}`}`
  const references = referencesOf(parsed)
  const inReplyTo = parsed.inReplyTo?.trim().split(/\s+/)[0] || undefined
  const subject = parsed.subject?.trim() ?? ''
  const target: MailTarget = {
    // The checked From, never Reply-To: the sender may write anyone there, and the answer (or an invitation) would
    // go to them.
    to: sender.address,
    subject: /^re:/i.test(subject) ? subject : `Re: ${subject}`.trim(),
    ...(messageId ? { in_reply_to: messageId } : {}),
    references: shortened(messageId ? [...references, messageId] : references),
  }
  // A reply names its thread's first mail first; a new mail starts a thread keyed by its own id.
  const key = references[0] ?? inReplyTo ?? messageId ?? deliveryId

  const { attachments, notes } = attachmentsOf(parsed, truncatedFrom)
  const body = newText(parsed.text ?? '')
  // A mail that says it all in its subject ("Today's figures?") is read by its subject.
  const said = body !== '' || attachments.length > 0 ? body : subject
  const text = [said, ...notes].filter((part) => part !== '').join('\n\n')

  // One From is one person; a mail naming several is vouched for by none of them.
  const verified = senders.length === 1 && senderVerified(headerValues(parsed, 'authentication-results'), email.authserv_id, address.split('@').at(-1))
  return {
    message: {
      deliveryId,
      sender: { id: address, ...(sender.name ? { displayName: sender.name } : {}), verified },
      thread: { key, target: { ...target } },
      text,
      ...(attachments.length > 0 ? { attachments } : {}),
    },
  }
}
