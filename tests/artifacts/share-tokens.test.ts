import { expect, test } from 'bun:test'
import { signShareToken, verifyShareToken } from '../../src/artifacts/share-tokens.ts'
import { deriveHmacKey } from '../../src/vault/keys.ts'

const master = new TextEncoder().encode('a master key for the token tests')
const key = await deriveHmacKey(master, 'switchboard artifact share links v1')
const ID = '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e'
const OTHER = '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7f'
const expiry = new Date('2026-12-21T09:30:00.750Z')

test('a token carries its expiry (to the second) and verifies for its artifact', async () => {
  const token = await signShareToken(key, ID, expiry)
  expect(token).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/)
  expect(token.split('.')[0]).toBe(String(Math.floor(expiry.getTime() / 1000)))
  expect(await verifyShareToken(key, ID, token)).toEqual(new Date('2026-12-21T09:30:00.000Z'))
  // The id's case does not matter: a UUID in either case names the same artifact.
  expect(await verifyShareToken(key, ID.toUpperCase(), token)).toEqual(new Date('2026-12-21T09:30:00.000Z'))
})

test('a token opens no other artifact, and no changed token verifies', async () => {
  const token = await signShareToken(key, ID, expiry)
  const [seconds, signature] = token.split('.') as [string, string]
  expect(await verifyShareToken(key, OTHER, token)).toBeUndefined()
  // A later expiry with the old signature: the link cannot be stretched.
  expect(await verifyShareToken(key, ID, `${Number(seconds) + 86_400}.${signature}`)).toBeUndefined()
  const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11)
  expect(await verifyShareToken(key, ID, `${seconds}.${flipped}`)).toBeUndefined()
  for (const malformed of ['', '.', seconds, `${seconds}.`, `x.${signature}`, `${seconds}.${signature}=`, `${seconds}.${signature}.x`, `-1.${signature}`]) {
    expect(await verifyShareToken(key, ID, malformed)).toBeUndefined()
  }
})

test('the last base64url character has spare bits: only the canonical form verifies', async () => {
  const token = await signShareToken(key, ID, expiry)
  const last = token.at(-1)!
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  // Characters with the same top two bits decode to the same bytes.
  const twin = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)]!
  expect(await verifyShareToken(key, ID, token.slice(0, -1) + twin)).toBeUndefined()
})

test('a key derived for another purpose, or from another master key, verifies nothing', async () => {
  const token = await signShareToken(key, ID, expiry)
  expect(await verifyShareToken(await deriveHmacKey(master, 'switchboard vault v1'), ID, token)).toBeUndefined()
  expect(await verifyShareToken(await deriveHmacKey(new TextEncoder().encode('another master key'), 'switchboard artifact share links v1'), ID, token)).toBeUndefined()
})
