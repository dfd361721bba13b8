import { timingSafeEqual } from 'node:crypto'

/** 32 random bytes, base64url: the session cookie, or after `sb_` a personal API token. */
export function newSecret(prefix = ''): string {
  return prefix + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/** Only this hash of a session or token is stored, so a stolen database holds no usable credential. */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher('sha256').update(secret).digest('hex')
}

/** Compares in time independent of where the strings differ (both are hashed first to equal length). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = new Bun.CryptoHasher('sha256').update(given).digest()
  const b = new Bun.CryptoHasher('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
