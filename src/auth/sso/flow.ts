/**
 * What a sign-in through an identity provider carries from its start to its callback, kept in the browser that
 * started it: a cookie, signed so it cannot be forged or edited, read once. The state in it must match the one the
 * provider sends back (so a callback started elsewhere is refused), and the nonce the ID token carries.
 */
export const FLOW_COOKIE = 'switchboard_sso'
/** A sign-in at the provider longer than this starts over. */
export const FLOW_TTL_MS = 10 * 60_000

export interface Flow {
  provider: string
  state: string
  nonce: string
  verifier: string
  redirect: string
  expires: number
}

const encoder = new TextEncoder()

async function signature(key: CryptoKey, payload: string): Promise<string> {
  return Buffer.from(await crypto.subtle.sign('HMAC', key, encoder.encode(payload))).toString('base64url')
}

export async function sealFlow(key: CryptoKey, flow: Flow): Promise<string> {
  const payload = Buffer.from(JSON.stringify(flow)).toString('base64url')
  return `${payload}.${await signature(key, payload)}`
}

/** The flow the cookie holds, or undefined when it is absent, forged, edited or expired. */
export async function openFlow(key: CryptoKey, sealed: string | undefined, now: number): Promise<Flow | undefined> {
  const [payload, signed] = sealed?.split('.') ?? []
  if (!payload || !signed) return undefined
  const ok = await crypto.subtle.verify('HMAC', key, Buffer.from(signed, 'base64url'), encoder.encode(payload))
  if (!ok) return undefined
  try {
    const flow = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Flow
    return typeof flow.expires === 'number' && flow.expires > now ? flow : undefined
  } catch {
    return undefined
  }
}
