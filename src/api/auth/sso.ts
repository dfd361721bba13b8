import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { SESSION_COOKIE } from '../../auth/authenticator.ts'
import { localRedirect } from '../../auth/redirect.ts'
import { createSession } from '../../auth/sessions.ts'
import { FLOW_COOKIE, FLOW_TTL_MS } from '../../auth/sso/flow.ts'
import { SignInFailed } from '../../auth/sso/single-sign-on.ts'
import { audit } from '../../audit/trail.ts'
import { originOf } from '../../http/origin.ts'
import type { ApiEnv } from '../../http/env.ts'
import type { Services } from '../../services.ts'
import { publicErrors } from '../responses.ts'

const ProviderParam = z.object({ provider: z.string().max(64).openapi({ param: { name: 'provider', in: 'path' }, description: 'The identity provider’s slug.', example: 'acme-okta' }) })

const offeredRoute = createRoute({
  method: 'get',
  path: '/auth/sso',
  security: [],
  operationId: 'listSignInProviders',
  summary: 'The identity providers a sign-in page offers',
  description: 'With `company` (a company’s slug), that company’s enabled providers, for its own sign-in page; without it, those a superadmin listed on the shared one.',
  tags: ['Auth'],
  request: { query: z.object({ company: z.string().max(100).optional().openapi({ example: 'acme' }) }) },
  responses: {
    200: {
      description: 'Each provider: “Sign in with {name}” starts at /auth/sso/{slug}.',
      content: { 'application/json': { schema: z.object({ data: z.array(z.object({ slug: z.string(), name: z.string(), company: z.string() })) }).openapi('SignInProviders') } },
    },
    ...publicErrors,
  },
})

const startRoute = createRoute({
  method: 'get',
  path: '/auth/sso/{provider}',
  security: [],
  operationId: 'startProviderSignIn',
  summary: 'Sign in through an identity provider',
  description:
    'Redirects the browser to the provider (authorization code with PKCE, a state and a nonce, kept in a signed cookie for the callback). ' +
    '`post_login_redirect` (a local path) is where the person lands once signed in. A provider that cannot be reached sends the browser back to the sign-in page, saying so.',
  tags: ['Auth'],
  request: { params: ProviderParam, query: z.object({ post_login_redirect: z.string().max(2000).optional() }) },
  responses: {
    200: {
      description: 'With `Accept: application/json`: where to send the browser, instead of the redirect (the flow cookie is set all the same).',
      content: { 'application/json': { schema: z.object({ authorization_url: z.url() }).openapi('ProviderSignInStart') } },
    },
    302: { description: 'To the provider’s authorization endpoint.' },
    303: { description: 'Back to the sign-in page with the reason.' },
    ...publicErrors,
  },
})

const callbackRoute = createRoute({
  method: 'get',
  path: '/auth/sso/{provider}/callback',
  security: [],
  operationId: 'finishProviderSignIn',
  summary: 'Where the identity provider sends the browser back',
  description:
    'Checks the state against this browser’s sign-in, redeems the code (with the PKCE verifier), verifies the ID token (signature by the provider’s keys, issuer, audience, nonce, expiry), ' +
    'finds or creates the person as the provider’s settings say, and signs them in (the usual session cookie), then sends them where they were going. Any refusal sends them to the sign-in page with a reason.',
  tags: ['Auth'],
  request: { params: ProviderParam, query: z.object({ code: z.string().max(4096).optional(), state: z.string().max(512).optional(), error: z.string().max(256).optional() }) },
  responses: {
    200: {
      description: 'With `Accept: application/json`: who is signed in and where they were going (the session cookie is set).',
      content: { 'application/json': { schema: z.object({ user_id: z.uuid(), expires_at: z.iso.datetime(), redirect: z.string() }).openapi('ProviderSignedIn') } },
    },
    303: { description: 'Signed in, to where the person was going; or back to the sign-in page with the reason.' },
    ...publicErrors,
  },
})

const wantsJson = (c: Context) => /application\/json/.test(c.req.header('accept') ?? '')

/** Sign-in through identity providers: the start, the callback, and the list the sign-in page offers. */
export function mountSingleSignOn(app: OpenAPIHono<ApiEnv>, services: Services): void {
  const { config, sso, sessionPolicy, clock, db } = services
  const secure = new URL(config.adminBaseUrl).protocol === 'https:'
  const origins = [config.baseUrl, config.adminBaseUrl]
  const failed = (c: Parameters<Parameters<typeof app.openapi>[1]>[0], failure: string, redirect = '/') =>
    c.redirect(`/login?${new URLSearchParams({ error: failure, post_login_redirect: redirect })}`, 303)

  app.openapi(offeredRoute, async (c) => c.json({ data: await sso.offered(c.req.valid('query').company) }, 200))

  app.openapi(startRoute, async (c) => {
    const redirect = localRedirect(c.req.valid('query').post_login_redirect, origins)
    try {
      const { url, cookie } = await sso.start(c.req.valid('param').provider, redirect)
      setCookie(c, FLOW_COOKIE, cookie, { path: '/auth/sso', httpOnly: true, sameSite: 'Lax', secure, maxAge: FLOW_TTL_MS / 1000 })
      if (wantsJson(c)) return c.json({ authorization_url: url.href }, 200)
      return c.redirect(url.href, 302)
    } catch (error) {
      if (!(error instanceof SignInFailed)) throw error
      services.log.warn('a sign-in through an identity provider could not start', { provider: c.req.valid('param').provider, error: error.detail })
      return failed(c, error.failure, redirect)
    }
  })

  app.openapi(callbackRoute, async (c) => {
    const slug = c.req.valid('param').provider
    // Read once: a second callback of the same flow (a replayed code) finds nothing to finish.
    const sealed = getCookie(c, FLOW_COOKIE)
    deleteCookie(c, FLOW_COOKIE, { path: '/auth/sso', secure })
    const origin = originOf(c)
    try {
      const { result: session, redirect } = await sso.finish(slug, new URL(c.req.url), sealed, async ({ userId, created, idToken }, provider, tx) => {
        const made = await createSession(tx, userId, sessionPolicy, clock.now(), { id: provider.id, idToken })
        if (created) await audit(tx, origin, { action: 'create', model: 'User', recordId: userId, companyId: provider.company_id, actorId: userId, changes: { via: `identity provider ${provider.name}` } })
        await audit(tx, origin, { action: 'sign_in', model: 'User', recordId: userId, companyId: provider.company_id, actorId: userId, changes: { identity_provider: provider.id } })
        return { ...made, userId }
      })
      setCookie(c, SESSION_COOKIE, session.token, { path: '/', httpOnly: true, sameSite: 'Lax', secure, maxAge: Math.floor(sessionPolicy.maxAgeMs / 1000) })
      if (wantsJson(c)) return c.json({ user_id: session.userId, expires_at: session.expiresAt.toISOString(), redirect }, 200)
      return c.redirect(redirect, 303)
    } catch (error) {
      if (!(error instanceof SignInFailed)) throw error
      services.log.warn('a sign-in through an identity provider was refused', { provider: slug, failure: error.failure, error: error.detail })
      await audit(db, origin, { action: 'sign_in_failed', model: 'IdentityProvider', recordId: null, companyId: error.companyId ?? null, actorId: null, changes: { provider: slug.slice(0, 64), reason: error.failure, detail: error.detail.slice(0, 500) } })
      return failed(c, error.failure)
    }
  })
}
