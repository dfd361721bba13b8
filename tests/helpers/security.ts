import { expect } from 'bun:test'
import type { Model } from '../../src/models/define.ts'
import type { Principal, TestPlatform } from './platform.ts'
import { expectProblem } from './problem.ts'

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: (id: string) => string
  body: boolean
}

/**
 * The generic routes of a model: six, five where records are created elsewhere (the create answers 405), two where
 * only the platform writes them (every write answers 405).
 */
export function crudRoutes(model: Model): Route[] {
  const collection = () => `/api/v1/${model.name}`
  const item = (id: string) => `/api/v1/${model.name}/${id}`
  if (model.writtenElsewhere) {
    return [
      { method: 'GET', path: collection, body: false },
      { method: 'GET', path: item, body: false },
    ]
  }
  return [
    { method: 'GET', path: collection, body: false },
    ...(model.createdElsewhere ? [] : [{ method: 'POST' as const, path: collection, body: true }]),
    { method: 'GET', path: item, body: false },
    { method: 'PUT', path: item, body: true },
    { method: 'PATCH', path: item, body: true },
    { method: 'DELETE', path: item, body: false },
  ]
}

const MISSING = '01936f3e-6d2a-7c41-9b1e-000000000000'

/**
 * The security cases every route gets, from one place: no credentials → 401; a role below the route's → 403;
 * a record that is not there → 404 (item routes); a body that breaks the schema → 422 (routes with a body).
 */
export async function expectRouteSecurity(p: TestPlatform, route: Route, weak: Principal, validBody: Record<string, unknown>) {
  const label = `${route.method} ${route.path(':id')}`
  const json = route.body ? validBody : undefined

  const anonymous = await p.call(route.method, route.path(MISSING), { as: null, json })
  expect(anonymous.status, `${label} without credentials`).toBe(401)
  expectProblem(anonymous, 401, 'unauthorized')

  const forbidden = await p.call(route.method, route.path(MISSING), { as: weak, json })
  expect(forbidden.status, `${label} below its role`).toBe(403)
  expectProblem(forbidden, 403, 'forbidden')

  const isItem = route.path('x') !== route.path('y')
  if (isItem) {
    expect((await p.call(route.method, route.path(MISSING), { json })).status, `${label} on a missing record`).toBe(404)
  }
  if (route.body) {
    const invalid = await p.call(route.method, route.path(MISSING), { json: { no_such_field: true } })
    // A missing record answers 404 before the body is read only when the body is valid; here it is not.
    expect(invalid.status, `${label} with a bad body`).toBe(422)
    expectProblem(invalid, 422, 'validation_error')
  }
}
