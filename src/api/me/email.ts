import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { hashSecret, newSecret } from '../../auth/secrets.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { maskAddress, type Mail } from '../../mail/mailer.ts'
import { reserve } from '../../throttle/reserve.ts'
import { commonErrors, ProblemSchema, signedIn, validationErrors } from '../responses.ts'

/** How long a confirmation link works. */
const CONFIRM_TTL_MS = 24 * 60 * 60 * 1000
/** Confirmation mails one person may have sent in an hour: each goes to an address they chose. */
const REQUESTS = { burst: 5, perSecond: 5 / 3600 }

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

const Requested = z
  .object({
    sent_to: z.string().openapi({ description: 'Where the link went, masked.', example: 'a…@example.com' }),
    expires_at: z.iso.datetime(),
  })
  .openapi('EmailChangeRequested')

export const requestEmailChangeRoute = createRoute({
  method: 'post',
  path: '/api/me/email',
  operationId: 'requestEmailChange',
  summary: 'Ask to change your account’s address: a link to confirm it is mailed to the new one',
  description:
    'Your address stays the same until you open the link mailed to the new address (24 hours, once) while signed in ' +
    'as yourself; until then the new address counts nowhere. The answer is the same whether or not the address ' +
    'belongs to another account (that account’s owner is told instead), so it tells nobody who has an account. ' +
    'A superadmin may also set an address directly on the User record.',
  tags: ['Auth'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: z.strictObject({ email: z.email().max(320) }).openapi('EmailChangeRequest') } } } },
  responses: {
    202: { description: 'A link is on its way.', content: { 'application/json': { schema: Requested } } },
    ...commonErrors,
    ...validationErrors,
    409: problem('The platform cannot send email (no SWITCHBOARD_SMTP_URL).'),
    503: problem('The mail server refused or did not answer; nothing changed.'),
  },
})

export const confirmEmailChangeRoute = createRoute({
  method: 'post',
  path: '/api/me/email/confirm',
  operationId: 'confirmEmailChange',
  summary: 'Confirm a new address with the token mailed to it',
  description: 'Only the person who asked, signed in, confirms: a link opened by anyone else does nothing.',
  tags: ['Auth'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: z.strictObject({ token: z.string().min(1).max(200) }).openapi('EmailChangeConfirmation') } } } },
  responses: {
    200: { description: 'The account’s address is now the new one.', content: { 'application/json': { schema: z.object({ email: z.string() }) } } },
    ...commonErrors,
    ...validationErrors,
    409: problem('The address has become another account’s meanwhile.'),
  },
})

function confirmationMail(to: string, username: string, url: string): Mail {
  return {
    to,
    subject: 'Confirm your address for Switchboard',
    text: [
      `Someone signed in as ${username} asked to make this the address of their Switchboard account.`,
      'If that was you, open this link while signed in (it works once, for 24 hours):',
      url,
      '',
      'If it was not you, ignore this mail: nothing changes unless the link is opened by that account.',
    ].join('\n'),
  }
}

function takenMail(to: string, username: string): Mail {
  return {
    to,
    subject: 'Your address was not given to another Switchboard account',
    text: `Someone signed in as ${username} asked to use this address for their account. It already belongs to your account, so nothing changed.`,
  }
}

export function mountEmailChange(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(requestEmailChangeRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { db, mailer, throttles, clock, config, log } = c.var.services
    const email = c.req.valid('json').email.trim()
    if (!mailer) throw new ApiError('conflict', 'The platform cannot send email (SWITCHBOARD_SMTP_URL is not set), so addresses cannot be confirmed; ask a superadmin to change yours.')
    const reservation = await reserve(throttles.login, [{ key: `email-change:${actor.userId}`, rate: REQUESTS }], clock.now())
    if (!reservation.allowed) {
      throw new ApiError('rate_limited', `Too many address changes asked for; try again in ${reservation.refused.retryAfter} s.`, { headers: { 'Retry-After': String(reservation.refused.retryAfter) } })
    }
    const me = await db.selectFrom('users').select('username').where('id', '=', actor.userId).executeTakeFirstOrThrow()
    const owner = await db.selectFrom('users').select('id').where(({ fn }) => fn('lower', ['email']), '=', email.toLowerCase()).executeTakeFirst()
    const expiresAt = new Date(clock.now() + CONFIRM_TTL_MS)
    let mail: Mail
    if (owner) {
      // The same answer as for a free address: whose address it is stays unsaid. Its owner hears of it instead.
      mail = takenMail(email, me.username)
    } else {
      const token = newSecret('eml_')
      await db
        .insertInto('email_changes')
        .values({ user_id: actor.userId, email, token_hash: hashSecret(token), expires_at: expiresAt })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ email, token_hash: hashSecret(token), expires_at: expiresAt }))
        .execute()
      mail = confirmationMail(email, me.username, `${config.adminBaseUrl}/confirm-email?${new URLSearchParams({ token })}`)
    }
    try {
      await mailer.send(mail)
    } catch (error) {
      log.warn('address confirmation not sent', { user_id: actor.userId, error: String(error) })
      if (!owner) await db.deleteFrom('email_changes').where('user_id', '=', actor.userId).execute()
      throw new ApiError('unavailable', 'The mail server did not take the message; nothing changed. Try again later.')
    }
    return c.json({ sent_to: maskAddress(email), expires_at: expiresAt.toISOString() }, 202)
  })

  app.openapi(confirmEmailChangeRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { db, clock } = c.var.services
    const { token } = c.req.valid('json')
    const pending = await db
      .deleteFrom('email_changes')
      .where('token_hash', '=', hashSecret(token))
      .where('user_id', '=', actor.userId)
      .returning(['email', 'expires_at'])
      .executeTakeFirst()
    if (!pending || new Date(pending.expires_at).getTime() <= clock.now()) {
      throw new ApiError('validation_error', 'This link is unknown, used, expired, or was sent for another account: sign in as the account that asked, or ask again.', {
        errors: [{ path: 'token', message: 'unknown, used or expired' }],
      })
    }
    // An address taken meanwhile breaks the unique index: a 409, like any duplicate.
    await db.updateTable('users').set({ email: pending.email }).where('id', '=', actor.userId).execute()
    return c.json({ email: pending.email }, 200)
  })
}
