import { ChannelSendError, type ChannelTarget } from '../../src/plugin-host/sdk.ts'

/** Where an answer goes: the thread's reply address and the headers that keep it in the thread. */
export interface MailTarget {
  to: string
  subject: string
  /** The Message-ID answered. */
  in_reply_to?: string
  /** The thread's ids, first to last, the one answered included. */
  references: string[]
}

/** Header values come from mail anyone can send: no line breaks may reach the answer's headers. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ').trim()

/** The target as this plugin wrote it into the thread; anything else is refused for good (retrying cannot fix it). */
export function readTarget(target: ChannelTarget): MailTarget {
  const { to, subject, in_reply_to: inReplyTo, references } = target
  const strings = (list: unknown): list is string[] => Array.isArray(list) && list.every((item) => typeof item === 'string')
  if (typeof to !== 'string' || typeof subject !== 'string' || (inReplyTo !== undefined && typeof inReplyTo !== 'string') || !strings(references)) {
    throw new ChannelSendError('The thread’s answer address is not one the email channel wrote (to, subject, in_reply_to, references).', false)
  }
  return {
    to: oneLine(to),
    subject: oneLine(subject),
    ...(inReplyTo ? { in_reply_to: oneLine(inReplyTo) } : {}),
    references: references.map(oneLine).filter((id) => id !== ''),
  }
}
