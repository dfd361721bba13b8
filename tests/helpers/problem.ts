import { expect } from 'bun:test'
import type { ErrorCode } from '../../src/errors.ts'
import type { Reply } from './platform.ts'

/** Asserts an RFC 9457 problem with the given status and code, and returns its body. */
export function expectProblem(reply: Reply, status: number, code: ErrorCode) {
  expect(reply.headers.get('content-type')).toBe('application/problem+json')
  expect(reply.body).toMatchObject({ status, code, type: `urn:switchboard:problem:${code}` })
  expect(typeof reply.body.title).toBe('string')
  expect(reply.body.detail.length).toBeGreaterThan(0)
  expect(reply.body.request_id).toMatch(/^[0-9a-f-]{36}$/)
  expect(reply.status).toBe(status)
  return reply.body as { detail: string; errors?: Array<{ path: string; message: string }> }
}
