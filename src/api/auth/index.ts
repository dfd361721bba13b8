import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { deleteCookie, setCookie } from 'hono/cookie'
import { readCredentials, SESSION_COOKIE } from '../../auth/authenticator.ts'
import { findLoginUser, rememberLoginAddress, verifyPassword } from '../../auth/login.ts'
import { localRedirect } from '../../auth/redirect.ts'
import { createSession, deleteSession } from '../../auth/sessions.ts'
import type { Services } from '../../services.ts'
import { reserve, type Claim } from '../../throttle/reserve.ts'
import { clientAddress } from '../../http/client-address.ts'
import { originOf } from '../../http/origin.ts'
import { audit } from '../../audit/trail.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { renderProblems } from '../hooks.ts'
import { createRouter } from '../router.ts'
import { loginRoute, logoutRoute } from './routes.ts'
import { mountSingleSignOn } from './sso.ts'

function wantsJson(c: Context): boolean {
  return /application\/json/.test(c.req.header('accept') ?? '')
}

/** Back to the sign-in page with the reason, keeping where the person was going. */
function backToLogin(c: Context, error: 'invalid' | 'throttled' | 'sso_required' | 'deactivated', redirect: string): Response {
  const query = new URLSearchParams({ error, post_login_redirect: redirect })
  return c.redirect(`/login?${query}`, 303)
}

/** Whether a company of the user's requires its identity provider, so a password does not sign them in. */
async function requiresSso(db: Services['db'], userId: string): Promise<boolean> {
  const row = await db.selectFrom('company_users as m').innerJoin('companies as c', 'c.id', 'm.company_id').select('c.id').where('m.user_id', '=', userId).where('c.require_sso', '=', true).executeTakeFirst()
  return row !== undefined
}

/** Sign-in and sign-out: one handler for both ports, so the console's form and scripts reach them alike. */
export function createAuthApp(services: Services): OpenAPIHono<ApiEnv> {
  const { config, db, clock, throttles, sessionPolicy } = services
  const app = createRouter()
  const secure = new URL(config.baseUrl).protocol === 'https:'
  // A redirect may name the platform's own origins in full; nowhere else.
  const origins = [config.baseUrl, config.adminBaseUrl]
  const accountRate = { burst: config.loginAccountPerHour, perSecond: config.loginAccountPerHour / 3600 }

  app.openapi(loginRoute, async (c) => {
    const type = c.req.header('content-type') ?? ''
    const form = /json/i.test(type) ? c.req.valid('json') : /x-www-form-urlencoded|multipart\/form-data/i.test(type) ? c.req.valid('form') : undefined
    if (!form) throw new ApiError('unsupported_media_type', 'Send the sign-in as a form or as JSON.')
    const redirect = localRedirect(form.post_login_redirect, origins)
    const now = clock.now()
    const address = clientAddress(c)
    const candidate = await findLoginUser(db, form.username, address)

    // Tokens are reserved before the password is checked and given back when it is right, so concurrent guesses
    // never get more checks than the limits allow and a correct password costs nothing.
    const claims: Claim[] = [{ key: `address:${address}`, rate: config.loginRate }]
    // The owner's usual addresses are exempt from the account's cap, so guessing from elsewhere cannot lock them out.
    if (!candidate?.known_address) {
      // One account whether named by username or email; a name that matches no one is still counted by name.
      const account = candidate ? `user:${candidate.id}` : `name:${form.username.toLowerCase()}`
      claims.push({ key: `account:${account}`, rate: accountRate })
    }
    const reservation = await reserve(throttles.login, claims, now)
    if (!reservation.allowed) {
      services.metrics.refused('login')
      const { retryAfter } = reservation.refused
      if (!wantsJson(c)) return backToLogin(c, 'throttled', redirect)
      throw new ApiError('rate_limited', `Too many failed sign-ins; try again in ${retryAfter} s.`, {
        headers: { 'Retry-After': String(retryAfter) },
      })
    }

    const user = await verifyPassword(candidate, form.password)
    const origin = originOf(c)
    if (!user) {
      // The name typed is not kept: people type their password there by mistake.
      await audit(db, origin, { action: 'sign_in_failed', model: 'User', recordId: candidate?.id ?? null, companyId: null, actorId: null })
      if (!wantsJson(c)) return backToLogin(c, 'invalid', redirect)
      throw new ApiError('unauthorized', 'Unknown username or wrong password.')
    }
    await reservation.release(clock.now())
    await rememberLoginAddress(db, user.id, address, now)
    // Told only once the password is right, so the answer says nothing of an account to someone guessing.
    if (user.deactivated) {
      if (!wantsJson(c)) return backToLogin(c, 'deactivated', redirect)
      throw new ApiError('forbidden', 'This account is deactivated by its company’s identity system; ask your admin.')
    }
    if (!user.is_superadmin && (await requiresSso(db, user.id))) {
      if (!wantsJson(c)) return backToLogin(c, 'sso_required', redirect)
      throw new ApiError('forbidden', 'Your company signs its people in through its identity provider: use “Sign in with …” on the sign-in page.')
    }

    const session = await db.transaction().execute(async (tx) => {
      const session = await createSession(tx, user.id, sessionPolicy, now)
      await audit(tx, origin, { action: 'sign_in', model: 'User', recordId: user.id, companyId: null, actorId: user.id })
      return session
    })
    setCookie(c, SESSION_COOKIE, session.token, {
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      secure,
      maxAge: Math.floor(sessionPolicy.maxAgeMs / 1000),
    })
    if (!wantsJson(c)) return c.redirect(redirect, 303)
    const { deactivated: _, ...shown } = user
    return c.json({ user: shown, expires_at: session.expiresAt.toISOString(), redirect }, 200)
  })

  app.openapi(logoutRoute, async (c) => {
    const credentials = readCredentials(c.req.raw.headers)
    const ended = credentials?.kind === 'session' ? await services.writes.unattended((scope) => deleteSession(scope, credentials.secret), originOf(c)) : undefined
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure })
    if (wantsJson(c)) return c.body(null, 204)
    // A session begun at an identity provider ends there too, which then sends the browser back to sign in.
    const atProvider = ended?.identity_provider_id && ended.id_token ? await services.sso.endSessionUrl(ended.identity_provider_id, ended.id_token, `${config.adminBaseUrl}/login`) : undefined
    return c.redirect(atProvider?.href ?? '/login', 303)
  })

  mountSingleSignOn(app, services)
  app.onError(renderProblems(services))
  return app
}
