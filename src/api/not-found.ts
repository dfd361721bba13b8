import type { Context } from 'hono'
import { ApiError } from '../errors.ts'

interface RouteEntry {
  method: string
  path: string
}

function safeDecode(text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Turns `/api/v1/User/:id` into a matcher; `*` matches the rest. */
function matcher(path: string): RegExp {
  const pattern = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${pattern}$`)
}

/**
 * Answers what no route matched: 405 with Allow when the path exists under other methods, a 404 naming the
 * model for an unknown `/api/v1/{model}`, a plain 404 otherwise.
 */
export function createNotFoundHandler(routes: () => readonly RouteEntry[], modelNames: () => readonly string[]) {
  let table: Array<{ method: string; test: RegExp }> | undefined
  return (c: Context): never => {
    table ??= routes()
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({ method: r.method, test: matcher(r.path) }))
    const path = c.req.path
    const allowed = [...new Set(table.filter((r) => r.test.test(path)).map((r) => r.method))]
    if (allowed.length > 0) {
      if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD')
      throw new ApiError('method_not_allowed', `${c.req.method} is not allowed on ${path}; use ${allowed.join(', ')}.`, {
        headers: { Allow: allowed.join(', ') },
      })
    }
    const model = safeDecode(/^\/api\/v1\/([^/]+)/.exec(path)?.[1])
    if (model !== undefined && !modelNames().includes(model)) {
      throw new ApiError('not_found', `There is no model ${model}. Models: ${modelNames().join(', ')}.`)
    }
    throw new ApiError('not_found', `Nothing at ${c.req.method} ${path}. The API is described at /api/openapi.json.`)
  }
}
