import type { Context } from 'hono'

interface AddressSource {
  requestIP?: (request: Request) => { address: string } | null
}

/**
 * The peer address Bun saw. Behind a proxy this is the proxy; trusting a forwarded header is a deployment choice
 * left for when it is configurable. The admin app forwards its caller's address when it calls the api in process.
 */
export function clientAddress(c: Context): string {
  const env = c.env as AddressSource | undefined
  return env?.requestIP?.(c.req.raw)?.address ?? 'unknown'
}
