/**
 * HMAC-SHA256 of `data` under `key`, as hex: how Slack (v0 signatures) and WhatsApp (X-Hub-Signature-256) sign their
 * webhooks. Compare the result with secretsEqual, never with ===.
 */
export function hmacSha256(key: string, data: string | Uint8Array): string {
  return new Bun.CryptoHasher('sha256', key).update(data).digest('hex')
}
