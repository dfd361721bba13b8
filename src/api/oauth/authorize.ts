import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { OAuthError } from '../../oauth/errors.ts'
import type { ConsentRequest } from '../../oauth/server.ts'
import { commonErrors, signedIn, validationErrors } from '../responses.ts'
import { resourceName } from './metadata.ts'

const param = (description: string) => z.string().max(4096).optional().openapi({ description })

const AuthorizationRequest = z
  .object({
    response_type: param('Must be `code`.'),
    client_id: param('A client metadata document URL, or the id registration gave.'),
    redirect_uri: param('One the client registered (a loopback one on any port).'),
    code_challenge: param('PKCE: base64url(SHA-256(verifier)).'),
    code_challenge_method: param('Must be `S256`.'),
    resource: param('RFC 8707: the MCP server URL (`{base}/mcp/{server}` or `{base}/mcp`) or the API (`{base}`).'),
    scope: param('`mcp` (default), and `api` for the API resource.'),
    state: param('Returned to the client as given.'),
    decision: z.enum(['approve', 'deny']).optional().openapi({ description: 'Absent: only check the request and describe it for consent.' }),
  })
  .openapi('OAuthAuthorizationRequest')

const Consent = z
  .object({
    client: z.object({
      client_id: z.string(),
      name: z.string().openapi({ description: 'As the client calls itself; may be empty.' }),
      origin: z.string().openapi({ description: 'Where the client is: its metadata document’s origin, else its redirect URI’s.' }),
      kind: z.enum(['metadata_document', 'dynamic', 'preregistered']),
      verified: z.boolean().openapi({ description: 'false for a client that registered itself: its name is only what it claims.' }),
    }),
    redirect_uri: z.string(),
    redirect_host: z.string().openapi({ description: 'Where the browser goes after the answer: the redirect URI’s host (or scheme, for an app’s own).' }),
    approved_before: z.boolean().openapi({ description: 'false for a client this person never approved: show where it sends them.' }),
    resource: z.string(),
    resource_name: z.string(),
    scopes: z.array(z.string()),
  })
  .openapi('OAuthConsent')

export const authorizeRoute = createRoute({
  method: 'post',
  path: '/api/oauth/authorize',
  operationId: 'authorizeOAuthClient',
  summary: 'Check an MCP host’s authorization request, and approve or deny it as the caller',
  description:
    'The console’s consent page calls this with the query of /oauth/authorize. Without `decision` it checks the request ' +
    'and answers `consent` (what to show the person) or `redirect_to` (a request that goes back to the client with an ' +
    'OAuth error). With `decision` it answers `redirect_to`: the client’s redirect URI with a code (approve) or ' +
    '`error=access_denied` (deny). A client or redirect URI that cannot be trusted is a 400: the browser must not go there. ' +
    'An OAuth access token may not approve grants.',
  tags: ['OAuth'],
  security: signedIn,
  request: { body: { content: { 'application/json': { schema: AuthorizationRequest } }, required: true } },
  responses: {
    200: {
      description: 'What to show, or where to send the browser.',
      content: { 'application/json': { schema: z.object({ consent: Consent.optional(), redirect_to: z.string().optional() }) } },
    },
    ...commonErrors,
    ...validationErrors,
  },
})

/** An http(s) URL's origin; a private-use scheme (an app on the device) as `scheme://`. */
function placeOf(url: URL, part: 'origin' | 'host'): string {
  return url.protocol === 'http:' || url.protocol === 'https:' ? url[part] : `${url.protocol}//`
}

function describe({ client, redirectUri, target, resource, scopes, approvedBefore }: ConsentRequest): z.infer<typeof Consent> {
  const origin = new URL(client.kind === 'metadata_document' ? client.client_id : redirectUri)
  return {
    client: {
      client_id: client.client_id,
      name: client.client_name,
      origin: placeOf(origin, 'origin'),
      kind: client.kind,
      verified: client.kind !== 'dynamic',
    },
    redirect_uri: redirectUri,
    redirect_host: placeOf(new URL(redirectUri), 'host'),
    approved_before: approvedBefore,
    resource,
    resource_name: resourceName(target),
    scopes,
  }
}

export function mountOAuthAuthorize(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(authorizeRoute, async (c) => {
    // A host holding a token cannot grant itself (or another host) more: authenticate() refuses it this door.
    const actor = requireActor(c.var.actor)
    const { decision, ...request } = c.req.valid('json')
    const { oauth } = c.var.services
    try {
      if (decision) return c.json({ redirect_to: await oauth.decide(request, actor, decision === 'approve') }, 200)
      const checked = await oauth.check(request, actor)
      return c.json(checked.kind === 'redirect' ? { redirect_to: checked.to } : { consent: describe(checked.consent) }, 200)
    } catch (error) {
      if (error instanceof OAuthError) throw new ApiError('bad_request', error.description)
      throw error
    }
  })
}
