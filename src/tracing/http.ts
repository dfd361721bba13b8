import { SpanKind } from '@opentelemetry/api'
import { routeOf } from '../http/route.ts'
import type { MiddlewareHandler } from 'hono'
import type { Tracing } from './tracing.ts'

/**
 * The request's span, a child of the caller's `traceparent`: everything the request does runs inside it. Named by
 * the route's template once it is known, as OpenTelemetry's HTTP conventions ask.
 */
export function requestSpans(tracing: Tracing): MiddlewareHandler {
  return (c, next) =>
    tracing.span(
      c.req.method,
      { 'http.request.method': c.req.method, 'url.path': c.req.path },
      async (span) => {
        await next()
        const route = routeOf(c)
        if (route) {
          span?.updateName(`${c.req.method} ${route}`)
          span?.setAttribute('http.route', route)
        }
        span?.setAttribute('http.response.status_code', c.res.status)
      },
      tracing.incoming(c.req.raw.headers),
      SpanKind.SERVER,
    )
}
