import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'

const JSON_BODY = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i

/**
 * Runs before the body is validated: a form, a text or a missing body is told 415, not "fields missing" (the
 * validator reads a body only when its Content-Type says JSON, so without one a handler would see none).
 */
export const requireJson: MiddlewareHandler = async (c, next) => {
  if (!JSON_BODY.test(c.req.header('content-type') ?? '')) {
    throw new ApiError('unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.')
  }
  await next()
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH'])

/**
 * A JSON body whose text holds a lone surrogate (`"\ud800"`, which JSON allows) is refused, naming where: the store
 * keeps UTF-8, which cannot hold one, and would quietly put U+FFFD in its place, so what was kept would not be what
 * was sent. Only a body with escapes is parsed here; the route parses it again (from the text, read once).
 */
export const wellFormedJson: MiddlewareHandler = async (c, next) => {
  if (WITH_BODY.has(c.req.method) && JSON_BODY.test(c.req.header('content-type') ?? '')) {
    const text = await c.req.text()
    const path = text.includes('\\u') ? illFormedAt(parsed(text), '') : undefined
    if (path !== undefined) {
      throw new ApiError('validation_error', `The body has text that is not well-formed at ${path || 'its top'}: a lone surrogate (\\uD800–\\uDFFF without its pair).`, {
        errors: [{ path, message: 'is not well-formed text (a lone surrogate)' }],
      })
    }
  }
  await next()
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    // Malformed JSON is the route's to refuse, in its own words.
    return undefined
  }
}

/** Where the first ill-formed string (or key) is, as a dotted path; undefined when there is none. */
function illFormedAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : path
  if (!value || typeof value !== 'object') return undefined
  for (const [key, inner] of Object.entries(value)) {
    const here = path ? `${path}.${key}` : key
    if (!key.isWellFormed()) return here
    const found = illFormedAt(inner, here)
    if (found !== undefined) return found
  }
  return undefined
}
