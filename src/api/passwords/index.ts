import type { OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { readCredentials } from '../../auth/authenticator.ts'
import { mayManageUser } from '../../auth/ladder.ts'
import { audit } from '../../audit/trail.ts'
import { originOf } from '../../http/origin.ts'
import { forceReset, isCurrentPassword, issueReset, setPassword, useReset } from '../../auth/passwords.ts'
import { maskAddress } from '../../mail/mailer.ts'
import { forgotMail, requesterOf, resetMail, resetUrl } from './reset-mail.ts'
import { User } from '../../models/user.ts'
import { getRecord } from '../../models/records.ts'
import type { Services } from '../../services.ts'
import { reserve } from '../../throttle/reserve.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { renderProblems } from '../hooks.ts'
import { createRouter } from '../router.ts'
import { changePasswordRoute, forgotRoute, issueResetRoute, useResetRoute } from './routes.ts'
import { clientAddress } from '../../http/client-address.ts'

/** Changing one's own password, and reset links that admins hand over instead of setting someone's password. */
export function mountPasswords(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(changePasswordRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { db, throttles, config, clock } = c.var.services
    const body = c.req.valid('json')
    // A stolen session must not become a way to guess the password: wrong guesses cost like failed sign-ins.
    const reservation = await reserve(throttles.login, [{ key: `password:${actor.userId}`, rate: config.loginRate }], clock.now())
    if (!reservation.allowed) {
      throw new ApiError('rate_limited', `Too many wrong passwords; try again in ${reservation.refused.retryAfter} s.`, {
        headers: { 'Retry-After': String(reservation.refused.retryAfter) },
      })
    }
    if (!(await isCurrentPassword(db, actor.userId, body.current_password))) {
      throw new ApiError('validation_error', 'The current password is not right.', { errors: [{ path: 'current_password', message: 'wrong password' }] })
    }
    await reservation.release(clock.now())
    const credentials = readCredentials(c.req.raw.headers)
    await c.var.services.writes.run(actor, (scope) =>
      setPassword(scope, actor.userId, body.password, {
        ...(credentials?.kind === 'session' ? { keepSession: credentials.secret } : {}),
        keepApiTokens: !body.end_api_tokens,
      }),
    )
    return c.body(null, 204)
  })

  app.openapi(issueResetRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { db, clock, config } = c.var.services
    const { id } = c.req.valid('param')
    // Not visible: 404, as for any record; visible but out of reach on the ladder: 403.
    await getRecord(db, actor, User, id.toLowerCase())
    // A link for oneself would change one's password without the current one.
    if (id.toLowerCase() === actor.userId) throw new ApiError('forbidden', 'Change your own password with POST /api/me/password, giving the current one.')
    if (!(await mayManageUser(db, actor, id.toLowerCase()))) {
      throw new ApiError('forbidden', 'Only a superadmin, or an admin of the user’s only company whose role is not below theirs, makes reset links.')
    }
    const userId = id.toLowerCase()
    const { mailer } = c.var.services
    const person = await db.selectFrom('users').select(['email', 'username']).where('id', '=', userId).executeTakeFirstOrThrow()
    if (!mailer || !person.email) {
      // The operator's way back in for someone when the platform cannot mail: the link, to a superadmin only.
      if (actor.isSuperadmin) {
        const { token, expiresAt } = await db.transaction().execute(async (tx) => {
          const made = await issueReset(tx, userId, actor, clock.now())
          await audit(tx, actor.origin, { action: 'password_reset_link', model: 'User', recordId: userId, companyId: null, actorId: actor.userId, changes: { link: 'shown' } })
          return made
        })
        return c.json({ url: resetUrl(config.adminBaseUrl, token), token, expires_at: expiresAt.toISOString() }, 201)
      }
      throw new ApiError('conflict', mailer ? 'This user has no email address to send a reset link to.' : 'The platform cannot send email (SWITCHBOARD_SMTP_URL is not set), so it cannot send a reset link; ask the operator.')
    }
    const { token, expiresAt } = await issueReset(db, userId, actor, clock.now())
    try {
      await mailer.send(resetMail(person, await requesterOf(db, actor), resetUrl(config.adminBaseUrl, token)))
    } catch (error) {
      await db.deleteFrom('password_resets').where('user_id', '=', userId).execute()
      c.var.services.log.warn('reset link not sent', { user_id: userId, error: String(error) })
      throw new ApiError('unavailable', 'The mail server did not take the reset link; nothing was changed. Try again later.')
    }
    await c.var.services.writes.run(actor, (scope) => forceReset(scope, userId, actor))
    return c.json({ sent_to: maskAddress(person.email), expires_at: expiresAt.toISOString() }, 202)
  })
}

/** Asking for a reset link cannot be told apart by its answer: whether an account matched stays unsaid. */
const FORGOT_ANSWER = 'If an account matches and has an email address, a link to choose a new password is on its way.'
/** Links asked for one account: a few an hour, so nobody fills someone's mailbox. */
const FORGOT_PER_ACCOUNT = { burst: 3, perSecond: 3 / 3600 }

/**
 * POST /auth/password-reset and /auth/forgot-password: like sign-in, they answer on both ports, for the console's
 * forms and for scripts.
 */
export function createPasswordResetApp(services: Services): OpenAPIHono<ApiEnv> {
  const app = createRouter()
  app.openapi(forgotRoute, async (c) => {
    const type = c.req.header('content-type') ?? ''
    const json = /json/i.test(type)
    const form = json ? c.req.valid('json') : /x-www-form-urlencoded|multipart\/form-data/i.test(type) ? c.req.valid('form') : undefined
    if (!form) throw new ApiError('unsupported_media_type', 'Send the username or email as a form or as JSON.')
    const { db, clock, config, throttles, mailer, log } = services
    const login = form.login.toLowerCase()
    const claims = [
      { key: `address:${clientAddress(c)}`, rate: config.loginRate },
      { key: `forgot:${login}`, rate: FORGOT_PER_ACCOUNT },
    ]
    const reservation = await reserve(throttles.login, claims, clock.now())
    if (!reservation.allowed) {
      if (!json) return c.redirect(`/forgot-password?${new URLSearchParams({ error: 'throttled' })}`, 303)
      throw new ApiError('rate_limited', `Too many requests; try again in ${reservation.refused.retryAfter} s.`, { headers: { 'Retry-After': String(reservation.refused.retryAfter) } })
    }
    const person = await db
      .selectFrom('users')
      .select(['id', 'username', 'email'])
      .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', login), eb(eb.fn('lower', ['email']), '=', login)]))
      .executeTakeFirst()
    if (person?.email && mailer) {
      // The person asks for themselves: the link's maker is them (see makerMayStill), in no company's name.
      const self = { userId: person.id, companyId: null, isSuperadmin: false }
      const origin = originOf(c)
      // Sent after the answer: how long a mail server takes must not tell who has an account.
      void (async () => {
        const { token } = await issueReset(db, person.id, self, clock.now())
        await audit(db, origin, { action: 'password_reset_link', model: 'User', recordId: person.id, companyId: null, actorId: null, changes: { link: 'mailed', asked_by: 'the person' } })
        await mailer.send(forgotMail({ email: person.email!, username: person.username }, resetUrl(config.adminBaseUrl, token)))
      })().catch((error) => log.warn('forgotten-password link not sent', { user_id: person.id, error: String(error) }))
    }
    return json ? c.json({ detail: FORGOT_ANSWER }, 202) : c.redirect('/login?forgot=sent', 303)
  })
  app.openapi(useResetRoute, async (c) => {
    const type = c.req.header('content-type') ?? ''
    const json = /json/i.test(type)
    const form = json ? c.req.valid('json') : /x-www-form-urlencoded|multipart\/form-data/i.test(type) ? c.req.valid('form') : undefined
    if (!form) throw new ApiError('unsupported_media_type', 'Send the new password as a form or as JSON.')
    try {
      await services.writes.unattended((scope) => useReset(scope, form.token, form.password, services.clock.now()), originOf(c))
    } catch (error) {
      if (json || !(error instanceof ApiError)) throw error
      return c.redirect(`/reset-password?${new URLSearchParams({ error: 'expired' })}`, 303)
    }
    return json ? c.body(null, 204) : c.redirect('/login?reset=done', 303)
  })
  app.onError(renderProblems(services))
  return app
}
