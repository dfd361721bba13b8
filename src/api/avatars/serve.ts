import type { Context } from 'hono'
import type { Executor } from '../../db/schema.ts'
import { findAvatar } from './store.ts'

/**
 * How every stored avatar is sent: as the type it was judged to be and never sniffed as another, sandboxed and
 * unable to load anything should a browser open it as a page, and cached for good, since a new picture always
 * gets a new name.
 */
export const AVATAR_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'public, max-age=31536000, immutable',
} as const

/** The answer for GET /static/avatars/{file}: the picture the name names, or undefined for the caller's 404. */
export async function avatarFile(c: Context, db: Executor, file: string): Promise<Response | undefined> {
  const avatar = await findAvatar(db, file)
  if (!avatar) return undefined
  return c.body(avatar.bytes as Uint8Array<ArrayBuffer>, 200, { ...AVATAR_HEADERS, 'content-type': avatar.mediaType })
}
