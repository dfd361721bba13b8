import { sql } from 'kysely'
import type { Actor } from '../../auth/actor.ts'
import type { Db, Executor } from '../../db/schema.ts'
import { scoped } from '../../db/scoped.ts'
import type { CacheFlusher } from '../../events/caches.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { User } from '../../models/user.ts'
import { AVATAR_EXTENSIONS, type AvatarMediaType } from './image.ts'

export const AVATAR_PREFIX = '/static/avatars/'

/**
 * A stored avatar's file name: the random id and the extension of its type, nothing else. Anything else names no
 * avatar, so no other string ever reaches the query.
 */
const AVATAR_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.(png|jpg|gif|webp)$/

export function avatarPath(id: string, mediaType: AvatarMediaType): string {
  return `${AVATAR_PREFIX}${id}.${AVATAR_EXTENSIONS[mediaType]}`
}

/** Whose picture: the signed-in person's own, or an agent's (which the caller was allowed to edit). */
export type AvatarOwner = { user: string } | { agent: string }

/**
 * Sets the owner's avatar column as an edit of the record would: a new version, so an open edit form's If-Match
 * goes stale. Through the tenant-scoped builder: another company's agent is not found here either.
 */
function setAvatar(db: Executor, actor: Actor, owner: AvatarOwner, avatar: string | null) {
  const changed = { avatar, version: sql<number>`version + 1`, updated_at: sql<Date>`now()` }
  if ('user' in owner) return scoped(db, actor).updateTable(User).set(changed).where('users.id', '=', owner.user).executeTakeFirstOrThrow()
  return scoped(db, actor).updateTable(AgentConfigRecord).set(changed).where('agent_configs.id', '=', owner.agent).executeTakeFirstOrThrow()
}

function ownedBy(owner: AvatarOwner) {
  return 'user' in owner ? (['user_id', owner.user] as const) : (['agent_id', owner.agent] as const)
}

/** Where avatars are kept: the store, and the caches a changed agent makes stale. */
export interface AvatarStore {
  db: Db
  caches: CacheFlusher
}

/**
 * Stores the picture as the owner's avatar in place of any earlier one and points its record at it. The record is
 * updated first, so concurrent uploads for one owner take turns on its lock and the last one stands whole. The
 * id is random rather than a UUIDv7, whose time part would make the next picture's address guessable.
 */
export async function replaceAvatar({ db, caches }: AvatarStore, actor: Actor, owner: AvatarOwner, mediaType: AvatarMediaType, bytes: Uint8Array): Promise<string> {
  const id = crypto.randomUUID()
  const path = avatarPath(id, mediaType)
  const [column, ownerId] = ownedBy(owner)
  await db.transaction().execute(async (tx) => {
    await setAvatar(tx, actor, owner, path)
    await tx.deleteFrom('user_avatars').where(column, '=', ownerId).execute()
    await tx.insertInto('user_avatars').values({ id, [column]: ownerId, media_type: mediaType, bytes }).execute()
  })
  await changed(caches, owner)
  return path
}

/** No picture any more: the stored one is deleted, and (for a person) an http(s) address set by an edit is cleared too. */
export async function removeAvatar({ db, caches }: AvatarStore, actor: Actor, owner: AvatarOwner): Promise<void> {
  const [column, ownerId] = ownedBy(owner)
  await db.transaction().execute(async (tx) => {
    await setAvatar(tx, actor, owner, null)
    await tx.deleteFrom('user_avatars').where(column, '=', ownerId).execute()
  })
  await changed(caches, owner)
}

/** An agent's record changed outside the records layer: every process drops its copy, as after any other write of it. */
async function changed(caches: CacheFlusher, owner: AvatarOwner): Promise<void> {
  if ('agent' in owner) await caches.flush('agents')
}

/** The stored picture a file name under /static/avatars/ names, or undefined (also for a name of the wrong form). */
export async function findAvatar(db: Executor, file: string): Promise<{ mediaType: AvatarMediaType; bytes: Uint8Array } | undefined> {
  const match = AVATAR_FILE.exec(file)
  if (!match) return undefined
  const [, id, ext] = match
  const row = await db.selectFrom('user_avatars').select(['media_type', 'bytes']).where('id', '=', id!).executeTakeFirst()
  // The extension is part of the name: a JPEG is not also served as /<id>.png.
  if (!row || AVATAR_EXTENSIONS[row.media_type] !== ext) return undefined
  return { mediaType: row.media_type, bytes: new Uint8Array(row.bytes) }
}
