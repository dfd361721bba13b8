import type { Context } from 'hono'
import { validationError } from '../models/validation.ts'
import type { Services } from '../services.ts'
import { ApiError, toApiError, zodErrors } from '../errors.ts'
import { problemResponse } from '../http/problem.ts'

/** Validation failures: body problems are its content (422); query, path and header problems its form (400). */
export const apiDefaultHook = (result: { success: boolean; target: string; error?: unknown }): void => {
  if (result.success) return
  const error = result.error as Parameters<typeof zodErrors>[0]
  if (result.target === 'json' || result.target === 'form') throw validationError(error)
  throw new ApiError('bad_request', `The ${result.target} is not valid.`, { errors: zodErrors(error, result.target) })
}

/**
 * For the record routes, whose ids name records: a malformed one names none, so it is a 404 like an unknown id,
 * not a 400. Other validation failures as apiDefaultHook.
 */
export function malformedIdIsNotFound(model: string) {
  return (result: { success: boolean; target: string; error?: unknown }, c: Context): undefined => {
    if (!result.success && result.target === 'param') throw new ApiError('not_found', `No ${model} with id ${c.req.param('id')}.`)
    apiDefaultHook(result)
    return undefined
  }
}

/** The one onError: every failure becomes problem+json; unexpected ones are logged with the request id. */
export function renderProblems(services: Pick<Services, 'log'>) {
  return (error: unknown, c: Context): Response => {
    const problem = toApiError(error)
    if (problem.status >= 500) {
      services.log.error('request failed', {
        request_id: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        error: String((error as Error)?.stack ?? error),
      })
    }
    return problemResponse(c, problem)
  }
}
