import { isIP } from 'node:net'
import type { ChannelEndpoint, ChannelKernel } from '../../src/plugin-host/sdk.ts'

/** An agent's email settings lack something the channel needs: the admin must fix them, retrying will not help. */
export class MailSettingsError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MailSettingsError'
  }
}

/** Where and as whom to connect to one of the agent's mail servers. */
export interface MailServer {
  /** The address to connect to, checked against the outbound-address policy just now. */
  address: string
  /** The host name as set, for TLS (SNI and certificate); none when the host is an address itself. */
  servername: string | undefined
  port: number
  secure: boolean
  user: string
  password: string
}

/**
 * The agent's IMAP or SMTP server with its credentials. The host is judged again on every connection, as URLs
 * are: a name that was public when saved may point inward by now.
 */
export async function mailServer(kernel: ChannelKernel, endpoint: ChannelEndpoint<'email'>, kind: 'imap' | 'smtp'): Promise<MailServer> {
  const { email } = endpoint
  const server = email[kind]
  if (!server) throw new MailSettingsError(`The agent ${endpoint.agentName} has no ${kind.toUpperCase()} server in its email settings (email.${kind}.host).`)
  const user = email.username ?? email.account
  if (!user) throw new MailSettingsError(`The agent ${endpoint.agentName} has no mailbox login: set email.account (or email.username).`)
  if (!email.password_secret) {
    throw new MailSettingsError(`The agent ${endpoint.agentName} has no mailbox password: set email.password_secret to the vault name that holds it.`)
  }
  const password = await endpoint.secret(email.password_secret)
  if (password === undefined) {
    throw new MailSettingsError(`The vault holds no secret named ${email.password_secret} for the agent ${endpoint.agentName} or its company: the mailbox password is missing.`)
  }
  const host = server.host.replace(/^\[(.*)\]$/, '$1')
  const address = await kernel.resolveAllowed(host)
  return { address, servername: isIP(host) === 0 ? host : undefined, port: server.port, secure: server.secure, user, password }
}
