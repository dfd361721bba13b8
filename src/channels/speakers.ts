import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'
import type { ChannelPlatform, InboundMessage } from './contract.ts'

/**
 * The company member a platform identity belongs to: linked through UserPlatform, or for email the member whose
 * account address it is. Undefined for a stranger, for someone who left the company, and for a sender the platform
 * could not vouch for (a forged From address is nobody).
 */
export async function speakerOf(db: Executor, companyId: string, platform: ChannelPlatform, sender: InboundMessage['sender']): Promise<string | undefined> {
  if (sender.verified === false) return undefined
  const id = platform === 'email' ? sender.id.toLowerCase() : sender.id
  const linked = await db
    .selectFrom('user_platforms as p')
    .innerJoin('company_users as m', (join) => join.onRef('m.user_id', '=', 'p.user_id').onRef('m.company_id', '=', 'p.company_id'))
    .select('p.user_id')
    .where('p.company_id', '=', companyId)
    .where('p.platform', '=', platform)
    .where(platform === 'email' ? sql<boolean>`lower(p.platform_user_id) = ${id}` : sql<boolean>`p.platform_user_id = ${id}`)
    .executeTakeFirst()
  if (linked || platform !== 'email') return linked?.user_id
  const member = await db
    .selectFrom('users as u')
    .innerJoin('company_users as m', 'm.user_id', 'u.id')
    .select('u.id')
    .where('m.company_id', '=', companyId)
    .where(sql<boolean>`lower(u.email) = ${id}`)
    .executeTakeFirst()
  return member?.id
}

/** Links the identity to the person (again, when it was someone else's: the code proves who holds it now). */
export async function linkSpeaker(db: Executor, companyId: string, userId: string, platform: ChannelPlatform, sender: InboundMessage['sender']): Promise<void> {
  const platformUserId = platform === 'email' ? sender.id.toLowerCase() : sender.id
  const username = (sender.username ?? sender.displayName ?? '').slice(0, 200)
  await db
    .insertInto('user_platforms')
    .values({ id: Bun.randomUUIDv7(), company_id: companyId, user_id: userId, platform, platform_user_id: platformUserId, platform_username: username })
    .onConflict((oc) =>
      oc.columns(['company_id', 'platform', 'platform_user_id']).doUpdateSet({ user_id: userId, platform_username: username, version: sql<number>`user_platforms.version + 1`, updated_at: sql<Date>`now()` }),
    )
    .execute()
}
