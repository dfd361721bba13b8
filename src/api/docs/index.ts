import { dirname } from 'node:path'
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { swaggerUI } from '@hono/swagger-ui'
import type { Context, Next } from 'hono'
import { serveStatic } from 'hono/bun'
import type { Config } from '../../config.ts'
import { cspHeader, PAGE_POLICY } from '../../http/security-headers.ts'
import type { ApiEnv } from '../../http/env.ts'
import { markDeprecated } from '../deprecations.ts'
import { publicErrors } from '../responses.ts'
import { ApiError } from '../../errors.ts'

// Swagger UI's assets come from the installed package, so the docs work on a machine with no internet.
const SWAGGER_DIR = dirname(Bun.fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')))
const SWAGGER_ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'])
const ASSET_BASE = '/api/docs/assets'

// Swagger UI's start-up is served as a file, like the bundle, so the page's policy allows no inline script.
const INIT_SCRIPT = `window.onload = () => {
  window.ui = SwaggerUIBundle({ dom_id: '#swagger-ui', url: '/api/openapi.json' })
}
`
const DOCS_POLICY = cspHeader({ ...PAGE_POLICY, 'img-src': ["'self'", 'data:'] })

const documentRoute = createRoute({
  method: 'get',
  path: '/api/openapi.json',
  security: [],
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI 3.1 description',
  tags: ['Discovery'],
  responses: { 200: { description: 'The OpenAPI document.', content: { 'application/json': { schema: z.object({}).passthrough() } } }, ...publicErrors },
})

const docsRoute = createRoute({
  method: 'get',
  path: '/api/docs',
  security: [],
  operationId: 'getApiDocs',
  summary: 'Interactive API documentation (Swagger UI)',
  tags: ['Discovery'],
  responses: { 200: { description: 'An HTML page.', content: { 'text/html': { schema: z.string() } } }, ...publicErrors },
})

/**
 * Mounts the document and the docs page. The document is generated once, when first asked for, from every route
 * registered by then: generating it costs a few hundred milliseconds that a start need not wait for.
 */
export function mountDocs(app: OpenAPIHono<ApiEnv>, config: Config, version: string): void {
  let document: string | undefined
  app.openapi(documentRoute, (c) => c.body((document ??= generate()), 200, { 'content-type': 'application/json; charset=utf-8' }) as never)
  const page = swaggerUI({
    title: 'Switchboard API',
    url: '/api/openapi.json', // for the option types only: init.js names the document
    manuallySwaggerUIHtml: () => `
      <div id="swagger-ui"></div>
      <link rel="stylesheet" href="${ASSET_BASE}/swagger-ui-dist/swagger-ui.css" />
      <script src="${ASSET_BASE}/swagger-ui-dist/swagger-ui-bundle.js"></script>
      <script src="${ASSET_BASE}/init.js"></script>`,
  })
  app.openapi(docsRoute, ((c: Context, next: Next) => {
    c.header('content-security-policy', DOCS_POLICY)
    return page(c, next)
  }) as never)
  app.get(`${ASSET_BASE}/init.js`, (c) => c.body(INIT_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }))
  app.get(
    `${ASSET_BASE}/swagger-ui-dist/:file`,
    async (c, next) => {
      // The package holds more than the page needs (its package.json, other builds): only these are served.
      const file = c.req.param('file')
      if (!SWAGGER_ASSETS.has(file)) throw new ApiError('not_found', `No documentation asset ${file}.`)
      await next()
    },
    serveStatic({
      root: SWAGGER_DIR,
      rewriteRequestPath: (path) => path.slice(`${ASSET_BASE}/swagger-ui-dist`.length),
      onFound: (_, c) => c.header('cache-control', 'public, max-age=86400'),
    }),
  )
  const generate = () => {
    const document = app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: {
          title: 'Switchboard API',
          version,
          description:
            'REST API of Switchboard. Errors are RFC 9457 problem+json. Lists take PostgREST-style filters ' +
            '(`?field=op.value`), `order`, `select`, `limit`, `offset` and `count=exact`.',
        },
        servers: [{ url: config.baseUrl, description: 'This instance' }],
    })
    markDeprecated(document as never)
    return JSON.stringify(document)
  }
}
