import type { OpenAPIHono } from '@hono/zod-openapi'
import { bodyLimit } from 'hono/body-limit'
import { originGuard } from '../auth/origin-guard.ts'
import { requestIds } from '../http/request-id.ts'
import { DATA_POLICY, securityHeaders } from '../http/security-headers.ts'
import type { Services } from '../services.ts'
import { apiThrottle } from '../throttle/api.ts'
import { createAuthApp } from './auth/index.ts'
import { authenticate, bearerChallenge } from './authenticate.ts'
import { mountOAuth } from './oauth/index.ts'
import type { ApiEnv } from '../http/env.ts'
import { mountAgents } from './agents/index.ts'
import { mountChat } from './chat/index.ts'
import { DOCUMENT_UPLOAD_PATH, documentBodyLimit, mayUpload, mountDocuments } from './documents/index.ts'
import { mountVoice, VOICE_UPLOAD_PATH, voiceUploadGuards } from './voice/index.ts'
import { mountScim, scimErrors } from './scim/index.ts'
import { SCIM_BASE } from './scim/routes.ts'
import { mountRunners } from './runners/index.ts'
import { mountVault } from './vault/index.ts'
import { mountMcp } from './mcp/index.ts'
import { mountCrud } from './crud/index.ts'
import { mountDocs } from './docs/index.ts'
import { ApiError } from '../errors.ts'
import { renderProblems } from './hooks.ts'
import { createRouter } from './router.ts'
import { mountOperations } from './operations/index.ts'
import { httpMetrics } from '../metrics/http.ts'
import { requestLog } from '../http/request-log.ts'
import { requestSpans } from '../tracing/http.ts'
import { mountInternal } from './internal/index.ts'
import { mountEmailChange } from './me/email.ts'
import { mountMe } from './me/index.ts'
import { mountPlans } from './plans/index.ts'
import { mountApprovals } from './approvals/index.ts'
import { mountUsage } from './usage/index.ts'
import { mountOverview } from './overview/index.ts'
import { mountVersion } from './version/index.ts'
import { DEPRECATIONS, deprecationHeaders } from './deprecations.ts'
import { wellFormedJson } from './json-body.ts'
import { streamLargeBodies } from '../http/large-bodies.ts'
import { VERSION } from '../version.ts'
import { AVATAR_PATH, mountAvatars } from './avatars/index.ts'
import { mountArtifacts } from './artifacts/index.ts'
import { createPasswordResetApp, mountPasswords } from './passwords/index.ts'
import { mountPluginList } from './plugins/index.ts'
import { mountTasks } from './tasks/index.ts'
import { mountChannels } from './channels/index.ts'
import { createNotFoundHandler } from './not-found.ts'


/** The api app (port 8000): REST API, docs, and later the MCP gateway and plugin routers. */
export function createApiApp(services: Services): OpenAPIHono<ApiEnv> {
  const { config } = services
  const app = createRouter({ serves: true })

  app.use(streamLargeBodies())
  if (services.tracing.enabled) app.use(requestSpans(services.tracing))
  if (services.metrics.enabled) app.use(httpMetrics(services.metrics))
  app.use(securityHeaders(DATA_POLICY))
  app.use(requestIds())
  // Probes answer before sign-in, the origin guard and the rate limits: they are the operator's, not a tenant's.
  mountOperations(app, services)
  // After the probes, which a balancer asks every few seconds: the log is for requests people and scripts make.
  app.use(requestLog(services.log))
  // Only while /api/v1 deprecates something: a layer every request passes for nothing otherwise.
  if (DEPRECATIONS.length > 0) app.use(deprecationHeaders())
  app.use(async (c, next) => {
    c.set('services', services)
    await next()
  })
  const generalBodyLimit = bodyLimit({
    maxSize: config.bodyLimitBytes,
    onError: () => {
      throw new ApiError('payload_too_large', `The body is larger than ${config.bodyLimitBytes} bytes.`)
    },
  })
  // A document upload has its own, larger limit instead of the general one.
  const uploadBodyLimit = documentBodyLimit(config.documentMaxBytes)
  // An avatar upload has a tighter limit of its own, counted as the body arrives.
  app.use((c, next) => {
    // An upload's body is read once its sender is known and admitted (below), not before.
    if (c.req.path === AVATAR_PATH || c.req.path === DOCUMENT_UPLOAD_PATH || c.req.path === VOICE_UPLOAD_PATH) return next()
    return generalBodyLimit(c, next)
  })
  app.use(originGuard([config.baseUrl, config.adminBaseUrl]))
  app.use(bearerChallenge(config.baseUrl))
  app.use(authenticate(services))
  // Who may upload, and whether their share of the uploads in flight has room, before a byte of the body is read.
  app.use(DOCUMENT_UPLOAD_PATH, mayUpload, uploadBodyLimit)
  app.use(VOICE_UPLOAD_PATH, ...voiceUploadGuards(config.voice.maxBytes))
  // One bucket per user for /api/v1/* and the plugin routes alike.
  const apiRate = apiThrottle(services)
  app.use('/api/v1/*', apiRate)
  // Chat writes store messages and start turns: a socket or script sending in a loop is held to the same bucket.
  // A pattern ending in `/*` also names the bare path (`/api/chat`), so one use() covers both.
  app.use('/api/chat/*', apiRate)
  app.use('/api/approvals/*', apiRate)
  app.use(`${SCIM_BASE}/*`, apiRate, scimErrors)
  // After the body limit and the rate limits; before the routes, which would store what it refuses.
  app.use('/api/*', wellFormedJson)
  app.use(`${SCIM_BASE}/*`, wellFormedJson)

  app.openAPIRegistry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'switchboard_session_token',
    description: 'Set by POST /auth/login.',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'scimToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'A company’s SCIM token (scim_…), made by an admin with POST /api/v1/ScimToken.',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'A personal API token (sb_…), made with POST /api/v1/ApiToken.',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth', {
    type: 'oauth2',
    description: 'For MCP hosts: authorization code with PKCE (S256); tokens are bound to the resource (RFC 8707) they were asked for.',
    flows: {
      authorizationCode: {
        authorizationUrl: `${config.adminBaseUrl}/oauth/authorize`,
        tokenUrl: `${config.baseUrl}/oauth/token`,
        refreshUrl: `${config.baseUrl}/oauth/token`,
        scopes: { mcp: 'Use the MCP gateway as you, within your permissions.', api: 'Call the REST API as you.' },
      },
    },
  })
  app.route('/', createAuthApp(services))
  app.route('/', createPasswordResetApp(services))
  mountInternal(app, config)
  mountVersion(app)
  mountMe(app)
  mountEmailChange(app)
  mountAvatars(app, apiRate)
  mountArtifacts(app, apiRate)
  mountPasswords(app)
  mountPluginList(app)
  mountChat(app)
  mountTasks(app)
  mountPlans(app)
  mountApprovals(app)
  mountUsage(app)
  mountOverview(app)
  mountDocuments(app)
  mountVoice(app)
  mountScim(app)
  mountAgents(app)
  mountChannels(app)
  mountRunners(app)
  mountVault(app)
  mountMcp(app, services)
  mountOAuth(app, services)
  services.plugins.mount(app, apiRate)
  mountCrud(app, services.models.values())
  mountDocs(app, config, VERSION)

  app.notFound(createNotFoundHandler(() => app.routes, () => [...services.models.keys()]))
  app.onError(renderProblems(services))
  return app
}
