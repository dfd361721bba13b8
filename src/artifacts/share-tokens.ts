/**
 * Share tokens: `<expiry>.<signature>`, the expiry in Unix seconds and the signature HMAC-SHA256 (key derived from
 * the master key for this purpose alone) over the artifact's id and that expiry. The token carries its own expiry,
 * so a link cannot be stretched without the key, and one artifact's token opens no other.
 */

const TOKEN = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/

function signedText(id: string, expiresAt: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`artifact-share\n${id.toLowerCase()}\n${expiresAt}`)
}

/** A token for the artifact `id`, good until `expiresAt` (rounded down to the second). */
export async function signShareToken(key: CryptoKey, id: string, expiresAt: Date): Promise<string> {
  const seconds = Math.floor(expiresAt.getTime() / 1000)
  const signature = await crypto.subtle.sign('HMAC', key, signedText(id, seconds))
  return `${seconds}.${Buffer.from(signature).toString('base64url')}`
}

/**
 * The expiry a token signed for `id` carries, or undefined when the token was not made by this key for this id
 * (malformed, altered, or another artifact's). The signature is checked in constant time by WebCrypto.
 */
export async function verifyShareToken(key: CryptoKey, id: string, token: string): Promise<Date | undefined> {
  const match = TOKEN.exec(token)
  if (!match) return undefined
  const seconds = Number(match[1])
  const signature = Buffer.from(match[2]!, 'base64url')
  // base64url of 32 bytes is 43 characters, but the last one carries 4 spare bits: only the canonical form counts.
  if (signature.length !== 32 || signature.toString('base64url') !== match[2]) return undefined
  const valid = await crypto.subtle.verify('HMAC', key, signature, signedText(id, seconds))
  return valid ? new Date(seconds * 1000) : undefined
}
