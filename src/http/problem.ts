import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { TITLES, type ApiError, type Problem } from '../errors.ts'

/** An ApiError as an RFC 9457 problem+json response. */
export function problemResponse(c: Context, error: ApiError): Response {
  const body: Problem = {
    type: `urn:switchboard:problem:${error.code}`,
    title: TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.options.errors ? { errors: error.options.errors } : {}),
    request_id: c.get('requestId') ?? '',
  }
  // Through the context, so headers set earlier in the request (X-Request-Id) are kept.
  return c.body(JSON.stringify(body), error.status as ContentfulStatusCode, {
    'content-type': 'application/problem+json',
    ...error.options.headers,
  })
}
