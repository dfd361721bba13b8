import { ApiError, hmacSha256, secretsEqual, type ChannelEndpoint, type PluginContext } from '../../src/plugin-host/sdk.ts'

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

/**
 * A request to one of the agent's Slack addresses (events, interactions), checked before anything in it is read:
 * the agent answers on Slack (404), its signing secret is in the vault and signed these exact bytes lately (401).
 * The endpoint and the body as they arrived; the channel is noted as reached.
 */
export async function verifiedRequest(context: PluginContext, c: { req: { arrayBuffer(): Promise<ArrayBuffer>; header(name: string): string | undefined } }, agentId: string): Promise<{ endpoint: ChannelEndpoint<'slack'>; body: Uint8Array }> {
  const endpoint = await context.channels.endpoint(agentId, 'slack')
  if (!endpoint) throw new ApiError('not_found', 'No enabled agent with this id answers on Slack.')
  const body = new Uint8Array(await c.req.arrayBuffer())
  const secretName = endpoint.settings.signing_secret_secret
  const secret = await endpoint.secret(secretName)
  if (!secret) throw new ApiError('unauthorized', `The agent’s Slack signing secret ${secretName} is not in the vault, so no request can be verified.`)
  const fault = signatureFault({ timestamp: c.req.header('x-slack-request-timestamp'), signature: c.req.header('x-slack-signature'), body }, secret)
  if (fault) throw new ApiError('unauthorized', fault)
  await context.channels.seen(endpoint)
  return { endpoint, body }
}
