import { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { deleteCookie, setCookie } from 'hono/cookie'
import { readCredentials, SESSION_COOKIE } from '../../auth/authenticator.ts'
import { verifyLogin } from '../../auth/login.ts'
import { localRedirect } from '../../auth/redirect.ts'
import { createSession, deleteSession } from '../../auth/sessions.ts'
import type { Services } from '../../services.ts'
import { clientAddress } from '../client-address.ts'
import { ApiError } from '../errors.ts'
import { apiDefaultHook, renderProblems } from '../hooks.ts'
import { loginRoute, logoutRoute } from './routes.ts'

function wantsJson(c: Context): boolean {
  return /application\/json/.test(c.req.header('accept') ?? '')
}

/** Back to the sign-in page with the reason, keeping where the person was going. */
function backToLogin(c: Context, error: 'invalid' | 'throttled', redirect: string): Response {
  const query = new URLSearchParams({ error, post_login_redirect: redirect })
  return c.redirect(`/login?${query}`, 303)
}

/** Sign-in and sign-out: one handler for both ports, so the console's form and scripts reach them alike. */
export function createAuthApp(services: Services): OpenAPIHono {
  const { config, db, clock, throttles, authenticator, sessionPolicy } = services
  const app = new OpenAPIHono({ defaultHook: apiDefaultHook })
  const secure = new URL(config.baseUrl).protocol === 'https:'

  app.openapi(loginRoute, async (c) => {
    const type = c.req.header('content-type') ?? ''
    const form = /json/i.test(type) ? c.req.valid('json') : /x-www-form-urlencoded|multipart\/form-data/i.test(type) ? c.req.valid('form') : undefined
    if (!form) throw new ApiError('unsupported_media_type', 'Send the sign-in as a form or as JSON.')
    const redirect = localRedirect(form.post_login_redirect)
    const now = clock.now()
    const keys = [`account:${form.username.toLowerCase()}`, `address:${clientAddress(c)}`]

    const blocked = (await Promise.all(keys.map((key) => throttles.login.peek(key, config.loginRate, now)))).find((t) => !t.allowed)
    if (blocked) {
      if (!wantsJson(c)) return backToLogin(c, 'throttled', redirect)
      throw new ApiError('rate_limited', `Too many failed sign-ins; try again in ${blocked.retryAfter} s.`, {
        headers: { 'Retry-After': String(blocked.retryAfter) },
      })
    }

    const user = await verifyLogin(db, form.username, form.password)
    if (!user) {
      await Promise.all(keys.map((key) => throttles.login.take(key, config.loginRate, now)))
      if (!wantsJson(c)) return backToLogin(c, 'invalid', redirect)
      throw new ApiError('unauthorized', 'Unknown username or wrong password.')
    }

    const session = await createSession(db, user.id, sessionPolicy, now)
    setCookie(c, SESSION_COOKIE, session.token, {
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      secure,
      maxAge: Math.floor(sessionPolicy.maxAgeMs / 1000),
    })
    if (!wantsJson(c)) return c.redirect(redirect, 303)
    return c.json({ user, expires_at: session.expiresAt.toISOString(), redirect }, 200)
  })

  app.openapi(logoutRoute, async (c) => {
    const credentials = readCredentials(c.req.raw.headers)
    if (credentials?.kind === 'session') {
      await deleteSession(db, credentials.secret)
      authenticator.invalidate()
    }
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure })
    return wantsJson(c) ? c.body(null, 204) : c.redirect('/login', 303)
  })

  app.onError(renderProblems(services))
  return app
}
