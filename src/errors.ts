import { HTTPException } from 'hono/http-exception'
import type { ZodError } from 'zod'
import { readableIssue } from './http/readable-issues.ts'

/** The one table from error code to HTTP status (DESIGN §3). */
export const STATUS_BY_CODE = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_error: 422,
  rate_limited: 429,
  budget_exceeded: 429,
  internal_error: 500,
  bad_gateway: 502,
  unavailable: 503,
  timeout: 504,
} as const

export type ErrorCode = keyof typeof STATUS_BY_CODE

export const TITLES: Record<ErrorCode, string> = {
  bad_request: 'Bad request',
  unauthorized: 'Authentication required',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  precondition_failed: 'Precondition failed',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  validation_error: 'Validation failed',
  rate_limited: 'Too many requests',
  budget_exceeded: 'Monthly budget spent',
  internal_error: 'Internal error',
  bad_gateway: 'Bad gateway',
  unavailable: 'Service unavailable',
  timeout: 'Timed out',
}

export interface FieldError {
  path: string
  message: string
}

export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  code: ErrorCode
  errors?: FieldError[]
  request_id: string
}

/**
 * The platform's one error class: thrown by any layer that refuses something (the kernel, a plugin, a route),
 * rendered as RFC 9457 problem+json by the api app's onError and as a readable message by the admin app.
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail)
    this.name = 'ApiError'
  }

  get status(): number {
    return STATUS_BY_CODE[this.code]
  }
}

export function zodErrors(error: ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.')
    if (issue.code === 'unrecognized_keys') {
      return { path: path || '(body)', message: `unknown field(s): ${issue.keys.join(', ')}` }
    }
    return { path: path || '(body)', message: readableIssue(issue) }
  })
}

/**
 * The columns of a unique key PostgreSQL reported, whatever expressions wrap them: "Key (company_id,
 * COALESCE(user_id, '…'::uuid), lower(name))=(…)" names company_id, user_id and name.
 */
function uniqueFields(detail: string): string[] {
  const key = /^Key \((.*)\)=\(/.exec(detail)?.[1]
  if (!key) return []
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of key) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (char === ',' && depth === 0) {
      parts.push(current)
      current = ''
    } else current += char
  }
  parts.push(current)
  // The first plain name in each part that is not a function's: lower(name) → name, COALESCE(user_id, …) → user_id.
  return parts.flatMap((part) => /(?:^|\()\s*"?([a-z_][a-z0-9_]*)"?\s*(?:[,)]|$)/i.exec(part.trim())?.[1] ?? [])
}

/** Database errors a caller can cause, by SQLSTATE. Everything else stays a 500 without its SQL. */
function fromDatabase(error: unknown): ApiError | undefined {
  const e = error as { code?: unknown; detail?: unknown; constraint?: unknown; constraint_name?: unknown }
  if (typeof e?.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) return undefined
  const detail = typeof e.detail === 'string' ? e.detail : ''
  const constraint = String(e.constraint_name ?? e.constraint ?? '')
  switch (e.code) {
    case '23505': {
      // "Key (company_id, name)=(…)": the tenant column is implied, name the fields the caller chose.
      const fields = uniqueFields(detail).filter((f) => f !== 'company_id')
      const named = fields.length > 1 ? `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}` : fields[0]
      return new ApiError('conflict', named ? `Another record already has the same ${named}.` : 'Another record already has these values.')
    }
    case '23503':
      return /is still referenced/.test(detail)
        ? new ApiError('conflict', 'Other records still refer to this one; delete or move them first.')
        : new ApiError('validation_error', 'A referenced record does not exist.', {
            errors: [{ path: /^Key \(([a-z_, ]+)\)/.exec(detail)?.[1]?.split(', ').pop() ?? constraint, message: 'no such record' }],
          })
    case '23514':
    case '23502':
      return new ApiError('validation_error', 'A value breaks a rule of the store.', {
        errors: [{ path: constraint || 'body', message: 'not allowed' }],
      })
    case '40001':
    case '40P01':
      return new ApiError('conflict', 'The change collided with another one; try again.')
    case '54001':
      return new ApiError('bad_request', 'The request is too deeply nested or too complex to run.')
    default:
      // Class 22, data exceptions: a value out of range, a NUL in text, a malformed pattern. The caller's input.
      return e.code.startsWith('22') ? new ApiError('bad_request', 'A value is malformed or out of range for its field.') : undefined
  }
}

const CODE_BY_STATUS = new Map<number, ErrorCode>(
  Object.entries(STATUS_BY_CODE).map(([code, status]) => [status, code as ErrorCode]),
)

/** Normalises anything thrown into an ApiError; unknown failures become internal_error. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof HTTPException) {
    const code = CODE_BY_STATUS.get(error.status) ?? (error.status >= 500 ? 'internal_error' : 'bad_request')
    return new ApiError(code, error.message || TITLES[code])
  }
  return fromDatabase(error) ?? new ApiError('internal_error', 'Something went wrong on our side. Quote the request_id when reporting it.')
}
