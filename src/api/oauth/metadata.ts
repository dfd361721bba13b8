import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../../http/env.ts'
import type { Config } from '../../config.ts'
import { serverParam } from '../mcp/routes.ts'
import { publicErrors } from '../responses.ts'
import { resourceUrl, scopesOf, SCOPES, type Target } from '../../oauth/resources.ts'

/** What a resource is called where a person or a host shows it. */
export function resourceName(target: Target): string {
  if (target.kind === 'api') return 'Switchboard API'
  return target.server === '' ? 'Switchboard MCP gateway (every server you may use)' : `Switchboard MCP server “${target.server}”`
}

/** Where each endpoint of the authorization server is; the consent page is the console's. */
export function authorizationServerMetadata(config: Pick<Config, 'baseUrl' | 'adminBaseUrl'>) {
  const issuer = config.baseUrl
  const authMethods = ['none', 'client_secret_basic', 'client_secret_post']
  return {
    issuer,
    authorization_endpoint: `${config.adminBaseUrl}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/api/docs`,
  }
}

/**
 * RFC 9728 protected resource metadata for the API and every gateway path, and RFC 8414 authorization server
 * metadata. Public, and open to any origin: browser-based hosts read them before they have a token.
 */
export function mountOAuthMetadata(app: OpenAPIHono<ApiEnv>, config: Config): void {
  const base = config.baseUrl
  const resource = (target: Target) => ({
    resource: resourceUrl(base, target),
    authorization_servers: [base],
    scopes_supported: scopesOf(target),
    bearer_methods_supported: ['header'],
    resource_name: resourceName(target),
    resource_documentation: `${base}/api/docs`,
  })
  const cached = { 'cache-control': 'public, max-age=300' }
  app.get('/.well-known/oauth-protected-resource', (c) => c.json(resource({ kind: 'api' }), 200, cached))
  app.get('/.well-known/oauth-protected-resource/mcp', (c) => c.json(resource({ kind: 'mcp', server: '' }), 200, cached))
  app.get('/.well-known/oauth-protected-resource/mcp/:server', (c) => c.json(resource({ kind: 'mcp', server: c.req.param('server') }), 200, cached))
  app.get('/.well-known/oauth-authorization-server', (c) => c.json(authorizationServerMetadata(config), 200, cached))

  for (const [path, operationId, summary] of [
    ['/.well-known/oauth-protected-resource', 'apiResourceMetadata', 'Protected resource metadata (RFC 9728) of the REST API'],
    ['/.well-known/oauth-protected-resource/mcp', 'mcpAggregateResourceMetadata', 'Protected resource metadata (RFC 9728) of /mcp, every gateway server as one'],
    ['/.well-known/oauth-protected-resource/mcp/{server}', 'mcpServerResourceMetadata', 'Protected resource metadata (RFC 9728) of one gateway server'],
    ['/.well-known/oauth-authorization-server', 'authorizationServerMetadata', 'Authorization server metadata (RFC 8414)'],
  ] as const) {
    app.openAPIRegistry.registerPath({
      method: 'get',
      path,
      operationId,
      summary,
      tags: ['OAuth'],
      security: [],
      ...(path.includes('{server}') ? { request: { params: serverParam } } : {}),
      responses: { 200: { description: 'The metadata document (JSON), which may be cached five minutes.' }, ...publicErrors },
    })
  }
}
