import type { Clock } from '../clock.ts'
import type { Executor } from '../db/schema.ts'
import { hashSecret } from '../auth/secrets.ts'

/** How long a link code works: long enough to switch to the phone, short enough to be useless once seen. */
export const LINK_CODE_TTL_MS = 15 * 60_000

// Crockford's base32: no I, L, O or U, so a code read off a screen is typed back right.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** Ten characters (50 bits), shown as two groups of five. */
function newCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10))
  const chars = [...bytes].map((b) => ALPHABET[b & 31]).join('')
  return `${chars.slice(0, 5)}-${chars.slice(5)}`
}

/** What a person typed, as it was issued: case, dashes and spaces ignored, look-alike letters read as digits. */
export function normalizeCode(typed: string): string {
  const plain = typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1')
  return plain.length === 10 ? `${plain.slice(0, 5)}-${plain.slice(5)}` : plain
}

/** A fresh code for the person in their company; their earlier unused ones stop working. */
export async function issueLinkCode(db: Executor, clock: Clock, user: { userId: string; companyId: string }): Promise<{ code: string; expires_at: string }> {
  const code = newCode()
  const expires = new Date(clock.now() + LINK_CODE_TTL_MS)
  await db.deleteFrom('channel_link_codes').where('user_id', '=', user.userId).execute()
  await db.insertInto('channel_link_codes').values({ code_hash: hashSecret(code), company_id: user.companyId, user_id: user.userId, expires_at: expires }).execute()
  return { code, expires_at: expires.toISOString() }
}

/** Uses a code up: the person it was issued to, when it is one of the company's and still valid; else undefined. */
export async function redeemLinkCode(db: Executor, clock: Clock, companyId: string, typed: string): Promise<string | undefined> {
  const used = await db
    .deleteFrom('channel_link_codes')
    .where('code_hash', '=', hashSecret(normalizeCode(typed)))
    .where('company_id', '=', companyId)
    .where('expires_at', '>', new Date(clock.now()))
    .returning('user_id')
    .executeTakeFirst()
  return used?.user_id
}
