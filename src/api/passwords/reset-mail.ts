import type { Actor } from '../../auth/actor.ts'
import type { Executor } from '../../db/schema.ts'
import type { Mail } from '../../mail/mailer.ts'

export function resetUrl(adminBaseUrl: string, token: string): string {
  return `${adminBaseUrl}/reset-password?${new URLSearchParams({ token })}`
}

/** Who asked for a reset, as the person reads it: their name, and the company they act for. */
export async function requesterOf(db: Executor, actor: Actor): Promise<string> {
  const user = await db.selectFrom('users').select(['display_name', 'username']).where('id', '=', actor.userId).executeTakeFirst()
  const name = user?.display_name || user?.username || 'An administrator'
  if (actor.isSuperadmin || actor.companyId === null) return `${name}, an administrator of the platform`
  const company = await db.selectFrom('companies').select('name').where('id', '=', actor.companyId).executeTakeFirst()
  return `${name}, an administrator of ${company?.name ?? 'your company'}`
}

/** The mail that answers someone who forgot their password: the link, and what to do if it was not them. */
export function forgotMail(person: { email: string; username: string }, url: string): Mail {
  return {
    to: person.email,
    subject: 'Choose a new password for Switchboard',
    text: [
      `Someone asked to reset the password of your Switchboard account (${person.username}).`,
      '',
      'Choose a new password here (the link works once, for 24 hours):',
      url,
      '',
      'If it was not you, ignore this mail: your password stays as it is until the link is used.',
    ].join('\n'),
  }
}

/** The mail that tells the person a reset was forced, and gives them, and nobody else, the way back in. */
export function resetMail(person: { email: string; username: string }, requester: string, url: string): Mail {
  return {
    to: person.email,
    subject: 'Choose a new password for Switchboard',
    text: [
      `${requester} has reset the password of your Switchboard account (${person.username}).`,
      'Your old password no longer works, and your sessions, personal API tokens and connected MCP hosts were signed out.',
      '',
      'Choose a new password here (the link works once, for 24 hours):',
      url,
      '',
      'If you did not expect this, tell your administrator.',
    ].join('\n'),
  }
}
