import { expect } from 'bun:test'
import type { ErrorCode } from '../../src/errors.ts'
import type { Reply } from './platform.ts'

/** A typed client's answer (`p.client().GET(…)`): the response, and the problem when it was refused. */
export interface Answered {
  response: Response
  error?: unknown
}

/** Asserts an RFC 9457 problem with the given status and code, and returns its body. */
export function expectProblem(answer: Reply | Answered, status: number, code: ErrorCode) {
  const reply: Reply = 'response' in answer ? { status: answer.response.status, headers: answer.response.headers, body: answer.error } : answer
  expect(reply.headers.get('content-type')).toBe('application/problem+json')
  expect(reply.body).toMatchObject({ status, code, type: `urn:switchboard:problem:${code}` })
  expect(typeof reply.body.title).toBe('string')
  expect(reply.body.detail.length).toBeGreaterThan(0)
  expect(reply.body.request_id).toMatch(/^[0-9a-f-]{36}$/)
  expect(reply.status).toBe(status)
  return reply.body as { detail: string; errors?: Array<{ path: string; message: string }> }
}
