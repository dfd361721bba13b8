import { z } from '@hono/zod-openapi'
import { STATUS_BY_CODE } from '../errors.ts'

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: 'urn:switchboard:problem:validation_error' }),
    title: z.string().openapi({ example: 'Validation failed' }),
    status: z.int().openapi({ example: 422 }),
    detail: z.string().openapi({ example: '1 field(s) are not valid: name: must not be empty' }),
    code: z.enum(Object.keys(STATUS_BY_CODE) as [keyof typeof STATUS_BY_CODE]),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    request_id: z.string(),
  })
  .openapi('Problem', { description: 'RFC 9457 problem details.' })

function problem(description: string) {
  return { description, content: { 'application/problem+json': { schema: ProblemSchema } } }
}

/** Error responses every route can give; spread into each route so the document names them. */
export const commonErrors = {
  400: problem('The request is malformed: bad JSON, or a query parameter it cannot use.'),
  401: problem('No valid credentials.'),
  403: problem('The caller may not do this.'),
  413: problem('The body is larger than the configured limit.'),
  429: problem('Over the request throttle; see Retry-After.'),
  500: problem('An unexpected failure; quote the request_id.'),
} as const

/** What any operation may answer, public ones too: a header every request is read for was malformed, or a failure. */
export const publicErrors = {
  400: problem('A header read on every request is malformed (X-Switchboard-Company is not a company id).'),
  500: problem('An unexpected failure; quote the request_id.'),
} as const

export const notFoundError = { 404: problem('No such record, or not visible to the caller.') } as const
export const validationErrors = {
  415: problem('The body is not JSON.'),
  422: problem('The body breaks the schema; `errors` lists each field.'),
} as const
export const conflictErrors = {
  409: problem('The change conflicts with another record (e.g. a unique field).'),
  412: problem('If-Match names a version that is no longer current.'),
} as const

/** Routes for signed-in callers: a session cookie or a personal API token. Typed so route inference keeps the body. */
export const signedIn: Array<Record<string, string[]>> = [{ sessionCookie: [] }, { apiToken: [] }]
