import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { clientAddress } from '../../http/client-address.ts'
import type { ApiEnv } from '../../http/env.ts'
import { OAuthError } from '../../oauth/errors.ts'
import type { Services } from '../../services.ts'
import { throttle } from '../../throttle/middleware.ts'

/** Token answers must never be cached (RFC 6749 §5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

/** An OAuth error as the RFCs answer it; a failed Basic authentication also says how to authenticate. */
function oauthError(c: Context, error: OAuthError): Response {
  const basic = error.status === 401 && /^Basic\s/i.test(c.req.header('authorization') ?? '')
  return c.json(error.toJSON(), error.status, { ...NO_STORE, ...(basic ? { 'www-authenticate': 'Basic realm="switchboard"' } : {}) })
}

/** The form body OAuth requests carry (RFC 6749 §3.2); anything else is refused as invalid_request. */
async function formParams(c: Context): Promise<URLSearchParams> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? '')) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.')
  }
  const params = new URLSearchParams(await c.req.text())
  // RFC 6749 §3.1: parameters sent without a value are treated as omitted, and none may be repeated.
  for (const key of new Set(params.keys())) {
    if (params.getAll(key).length > 1) throw new OAuthError('invalid_request', `${key} is given more than once.`)
    if (params.get(key) === '') params.delete(key)
  }
  return params
}

function caught(c: Context) {
  return (error: unknown) => {
    if (error instanceof OAuthError) return oauthError(c, error)
    throw error
  }
}

/** The token, revocation and registration endpoints. */
export function mountOAuthEndpoints(app: OpenAPIHono<ApiEnv>, services: Services): void {
  const { oauth, throttles, config, clock } = services
  // Registration is anonymous and writes a row: held to the sign-in rate per address.
  const registrations = throttle('oauth-register', throttles.login, config.loginRate, clock, (c) => clientAddress(c), services.metrics)

  app.post('/oauth/token', (c) =>
    (async () => {
      const params = await formParams(c)
      const client = await oauth.clients.authenticate(params, c.req.header('authorization'))
      const grantType = params.get('grant_type')
      if (grantType === 'authorization_code') return c.json(await oauth.exchangeCode(client, params), 200, NO_STORE)
      if (grantType === 'refresh_token') return c.json(await oauth.refresh(client, params), 200, NO_STORE)
      throw new OAuthError(grantType ? 'unsupported_grant_type' : 'invalid_request', grantType ? `grant_type ${grantType} is not supported.` : 'grant_type is required.')
    })().catch(caught(c)),
  )

  app.post('/oauth/revoke', (c) =>
    (async () => {
      const params = await formParams(c)
      const client = await oauth.clients.authenticate(params, c.req.header('authorization'))
      const token = params.get('token')
      if (!token) throw new OAuthError('invalid_request', 'token is required.')
      await oauth.revoke(client, token)
      return c.body(null, 200, NO_STORE)
    })().catch(caught(c)),
  )

  app.post('/oauth/register', registrations, (c) =>
    (async () => {
      let body: unknown
      try {
        body = await c.req.json()
      } catch {
        throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.')
      }
      return c.json(await oauth.clients.register(body), 201, NO_STORE)
    })().catch(caught(c)),
  )

  const form = (fields: string) => ({
    content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' as const, description: fields } } },
  })
  const oauthErrors = {
    400: { description: 'An OAuth error (RFC 6749 §5.2): `{error, error_description}`.' },
    401: { description: 'invalid_client: the client is unknown or its secret wrong.' },
  }
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/token',
    operationId: 'oauthToken',
    security: [],
    summary: 'Token endpoint: authorization_code (PKCE S256) and refresh_token (rotated; a reused one revokes the grant)',
    tags: ['OAuth'],
    request: { body: form('grant_type, code, redirect_uri, code_verifier, refresh_token, client_id, client_secret, resource, scope') },
    responses: { 200: { description: '`{access_token, token_type, expires_in, refresh_token, scope}`.' }, ...oauthErrors },
  })
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/revoke',
    operationId: 'oauthRevoke',
    security: [],
    summary: 'Token revocation (RFC 7009): a refresh token ends its whole grant',
    tags: ['OAuth'],
    request: { body: form('token, token_type_hint, client_id, client_secret') },
    responses: { 200: { description: 'Revoked, or was not a token of this client (the answer is the same).' }, ...oauthErrors },
  })
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/oauth/register',
    operationId: 'oauthRegister',
    security: [],
    summary: 'Dynamic client registration (RFC 7591), for hosts without a client metadata document',
    tags: ['OAuth'],
    request: { body: { content: { 'application/json': { schema: { type: 'object', description: 'Client metadata: redirect_uris (required), client_name, client_uri, token_endpoint_auth_method.' } } } } },
    responses: { 201: { description: 'The client, with its client_id (and client_secret unless token_endpoint_auth_method is none).' }, 400: oauthErrors[400], 429: { description: 'Too many registrations from this address.' } },
  })
}
