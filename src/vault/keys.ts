import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The master key: SWITCHBOARD_MASTER_KEY when set (several processes must share one), otherwise a key file made
 * with mode 0600 in the data directory on the first start. Never logged, never stored in the database.
 */
export function masterKey(fromEnvironment: string | undefined, dataDir: string): Uint8Array<ArrayBuffer> {
  if (fromEnvironment) return new TextEncoder().encode(fromEnvironment)
  const path = join(dataDir, 'master.key')
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true })
    try {
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64'))
      closeSync(fd)
    } catch (error) {
      // Another process made it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  chmodSync(path, 0o600)
  return new TextEncoder().encode(readFileSync(path, 'utf8').trim())
}

/** A purpose-bound AES-256-GCM key from the master key (HKDF-SHA256): the vault's key is no other feature's. */
export async function deriveKey(master: Uint8Array<ArrayBuffer>, purpose: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey('raw', master, 'HKDF', false, ['deriveKey'])
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new TextEncoder().encode('switchboard'), info: new TextEncoder().encode(purpose) },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  )
}

/**
 * A purpose-bound HMAC-SHA256 signing key from the master key (HKDF-SHA256, like deriveKey): what it signs (share
 * links) cannot be forged without the master key, and the key opens nothing the vault holds.
 */
export async function deriveHmacKey(master: Uint8Array<ArrayBuffer>, purpose: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey('raw', master, 'HKDF', false, ['deriveKey'])
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new TextEncoder().encode('switchboard'), info: new TextEncoder().encode(purpose) },
    base,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  )
}
