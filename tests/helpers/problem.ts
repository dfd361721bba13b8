import { expect } from 'bun:test'
import type { ErrorCode } from '../../src/errors.ts'
import type { Reply } from './platform.ts'

/** A typed client's answer (`p.client().GET(…)`): the response, and the problem when it was refused. */
export interface Answered {
  response: Response
  error?: unknown
}

/** Asserts an RFC 9457 problem with the given status and code, and returns its body. */
export function expectProblem(answer: Reply | Answered, status: number, code: ErrorCode): Problem {
  const reply: Reply = 'response' in answer ? { status: answer.response.status, headers: answer.response.headers, body: answer.error } : answer
  expect(reply.headers.get('content-type')).toBe('application/problem+json')
  expect(reply.body).toMatchObject({ status, code, type: `urn:switchboard:problem:${code}` })
  const problem = reply.body as Problem
  expect(typeof problem.title).toBe('string')
  expect(problem.detail.length).toBeGreaterThan(0)
  expect(problem.request_id).toMatch(/^[0-9a-f-]{36}$/)
  expect(reply.status).toBe(status)
  return problem
}

/** An RFC 9457 problem as the API answers it. */
export interface Problem {
  type: string
  title: string
  status: number
  code: ErrorCode
  detail: string
  request_id: string
  errors?: Array<{ path: string; message: string }>
  [extension: string]: unknown
}
