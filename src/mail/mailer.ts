import type { Transporter } from 'nodemailer'

/** A mail the platform sends a person of its own accord (not an agent's answer, which the email channel sends). */
export interface Mail {
  to: string
  subject: string
  text: string
}

export interface Mailer {
  send(mail: Mail): Promise<void>
}

/** Through the operator's SMTP server (SWITCHBOARD_SMTP_URL). The operator set it, so no outbound policy applies. */
export class SmtpMailer implements Mailer {
  readonly #server: URL
  /** Made with the first mail: nodemailer is loaded then, not at start-up. */
  #transport: Promise<Transporter> | undefined

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.#server = new URL(url)
  }

  async #connect(): Promise<Transporter> {
    const { createTransport } = await import('nodemailer')
    const server = this.#server
    const secure = server.protocol === 'smtps:'
    return createTransport({
      host: server.hostname.replace(/^\[|\]$/g, ''),
      port: server.port ? Number(server.port) : secure ? 465 : 587,
      secure,
      ...(server.username ? { auth: { user: decodeURIComponent(server.username), pass: decodeURIComponent(server.password) } } : {}),
      // Bounded, so that a mail server that does not answer fails the request instead of holding it.
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    })
  }

  async send({ to, subject, text }: Mail): Promise<void> {
    this.#transport ??= this.#connect()
    await (await this.#transport).sendMail({ from: this.from, to, subject, text })
  }

  close(): void {
    void this.#transport?.then((transport) => transport.close()).catch(() => {})
  }
}

/** `a…@example.com`: enough for someone who knows the address to recognise it, too little to learn it from. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@')
  return at <= 0 ? '…' : `${address[0]}…${address.slice(at)}`
}
