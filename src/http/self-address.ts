/**
 * Where this very process's api app answers, over loopback: what its own children (MCP subprocesses) call. Behind a
 * balancer the public base URL may reach another process, or not be reachable from the host at all.
 */
export class SelfAddress {
  #port: number

  constructor(
    private readonly host: string,
    port: number,
  ) {
    this.#port = port
  }

  /** Once the api server listens: its port (the configured one may have been 0, "any free port"). */
  listening(port: number): void {
    this.#port = port
  }

  get apiUrl(): string {
    return `http://${loopbackFor(this.host)}:${this.#port}`
  }
}

/** A wildcard or loopback listener is reached on loopback; a listener bound to one address only there. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0' || host === 'localhost' || host.startsWith('127.')) return '127.0.0.1'
  if (host === '::' || host === '::1') return '[::1]'
  return host.includes(':') ? `[${host}]` : host
}
