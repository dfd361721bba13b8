import type { ChannelEndpoint } from './contract.ts'

/** What the platforms are called when the agent names them to a person. */
const PLATFORM_NAMES = { telegram: 'Telegram', slack: 'Slack', whatsapp: 'WhatsApp', email: 'email', bridge: 'chat' } as const

/** A message that asks to link: "/link CODE", "link CODE", or Telegram's deep link "/start CODE". */
export const LINK_COMMAND = /^\s*\/?(?:link|start)(?:@\w+)?\s+([0-9A-Za-z][0-9A-Za-z -]{7,14})\s*$/i

/** The answer to a sender the company does not know, as the agent's channel settings choose. */
export function strangerReply(endpoint: ChannelEndpoint, adminBaseUrl: string): string {
  const where = PLATFORM_NAMES[endpoint.platform]
  if (endpoint.settings.unknown_senders === 'refuse') return `${endpoint.agentName} only talks to the people of its organisation, and this ${where} account is not one it knows.`
  // Slack takes a message starting with "/" for a slash command and never delivers it.
  const command = endpoint.platform === 'slack' ? 'link' : '/link'
  return (
    `Hello! ${endpoint.agentName} does not know this ${where} account yet. To talk to it, sign in at ${adminBaseUrl}/me/channels, ` +
    `get a link code there, and send it here as: ${command} <code>`
  )
}

export function linkedReply(endpoint: ChannelEndpoint, displayName: string): string {
  return `Linked: this ${PLATFORM_NAMES[endpoint.platform]} account now speaks as ${displayName}. Ask ${endpoint.agentName} anything.`
}

export function badCodeReply(adminBaseUrl: string): string {
  return `That link code is not valid (codes work once, for 15 minutes). Get a new one at ${adminBaseUrl}/me/channels.`
}

export function tooManyCodesReply(retryAfterSeconds: number): string {
  return `Too many link codes were tried. Try again in ${Math.ceil(retryAfterSeconds / 60)} minutes with a new code.`
}

export function turnFailedReply(endpoint: ChannelEndpoint, why: string): string {
  return `${endpoint.agentName} could not answer: ${why}`
}

export function skippedAttachments(names: string[], why: string): string {
  return `Not read: ${names.join(', ')} (${why}).`
}
