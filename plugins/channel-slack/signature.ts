import { hmacSha256, secretsEqual } from '../../src/plugin-host/sdk.ts'

/** How far Slack's timestamp may stray from our clock, either way: an older request may be a captured one, replayed. */
const TOLERANCE_SECONDS = 5 * 60

export interface SignedRequest {
  /** X-Slack-Request-Timestamp: Unix seconds. */
  timestamp: string | undefined
  /** X-Slack-Signature: `v0=` and the hex HMAC. */
  signature: string | undefined
  /** The body's exact bytes, as they arrived. */
  body: Uint8Array
}

/**
 * Why Slack did not sign this request, or undefined when it did. Slack's v0 signature is an HMAC-SHA256, under the
 * app's signing secret, of `v0:<timestamp>:<body>`; the timestamp is part of what is signed, so checking that it is
 * recent makes a captured request useless a few minutes later.
 */
export function signatureFault(request: SignedRequest, secret: string, nowMs = Date.now()): string | undefined {
  const { timestamp, signature, body } = request
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return 'The request carries no valid X-Slack-Request-Timestamp.'
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
    return 'The request’s X-Slack-Request-Timestamp is more than five minutes from now, so it may be a replay.'
  }
  if (!signature) return 'The request carries no X-Slack-Signature.'
  const signed = Buffer.concat([Buffer.from(`v0:${timestamp}:`), body])
  if (!secretsEqual(signature, `v0=${hmacSha256(secret, signed)}`)) {
    return 'The request’s X-Slack-Signature does not match: it was not signed with this agent’s signing secret.'
  }
  return undefined
}
