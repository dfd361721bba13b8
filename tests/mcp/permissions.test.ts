import { expect, test } from 'bun:test'
import { mayUseServer, mayUseTool, type PermissionRule } from '../../src/mcp/permissions.ts'

const rule = (user_id: string | null, server: string, tool: string, effect: 'allow' | 'deny'): PermissionRule => ({ user_id, server, tool, effect })

const defaults = [rule(null, 'everything', '*', 'allow'), rule(null, 'everything', 'printEnv', 'deny'), rule(null, 'files', '*', 'deny')]

test('no rule at all is a deny', () => {
  expect(mayUseTool([], 'ann', 'everything', 'echo')).toBe('deny')
  expect(mayUseServer([], 'ann', 'everything')).toBe(false)
})

test('a user with no rules of their own gets the company default', () => {
  expect(mayUseTool(defaults, 'ann', 'everything', 'echo')).toBe('allow')
  expect(mayUseTool(defaults, 'ann', 'everything', 'printEnv')).toBe('deny')
  expect(mayUseTool(defaults, 'ann', 'files', 'read')).toBe('deny')
  expect(mayUseTool(defaults, 'ann', 'unknown-server', 'x')).toBe('deny')
})

test('a user’s own rules for a server replace the defaults there, and only there', () => {
  const rules = [...defaults, rule('bob', 'everything', '*', 'deny'), rule('bob', 'everything', 'echo', 'allow'), rule('bob', 'files', 'read', 'allow')]
  expect(mayUseTool(rules, 'bob', 'everything', 'echo')).toBe('allow')
  expect(mayUseTool(rules, 'bob', 'everything', 'add')).toBe('deny')
  expect(mayUseTool(rules, 'bob', 'files', 'read')).toBe('allow')
  expect(mayUseTool(rules, 'bob', 'files', 'write')).toBe('deny')
  expect(mayUseServer(rules, 'bob', 'everything')).toBe(true)
  // Someone else still gets the defaults.
  expect(mayUseTool(rules, 'ann', 'everything', 'add')).toBe('allow')
})

test('the most specific rule wins; at equal specificity deny wins', () => {
  const rules = [rule('cy', '*', '*', 'allow'), rule('cy', 'everything', '*', 'deny'), rule('cy', 'everything', 'echo', 'allow'), rule('cy', '*', 'echo', 'deny')]
  expect(mayUseTool(rules, 'cy', 'everything', 'echo')).toBe('allow')
  expect(mayUseTool(rules, 'cy', 'everything', 'add')).toBe('deny')
  expect(mayUseTool(rules, 'cy', 'other', 'add')).toBe('allow')
  expect(mayUseTool(rules, 'cy', 'other', 'echo')).toBe('deny')
  const tie = [rule('dee', 'everything', 'echo', 'allow'), rule('dee', 'everything', 'echo', 'deny')]
  expect(mayUseTool(tie, 'dee', 'everything', 'echo')).toBe('deny')
})

test('a server is reachable when any of its tools is allowed, even if the server as a whole is not', () => {
  const rules = [rule(null, 'everything', '*', 'deny'), rule(null, 'everything', 'echo', 'allow')]
  expect(mayUseServer(rules, 'ann', 'everything')).toBe(true)
  expect(mayUseServer([rule(null, 'everything', '*', 'deny')], 'ann', 'everything')).toBe(false)
  // An allow that a more specific deny overrides does not count.
  expect(mayUseServer([rule(null, '*', 'echo', 'allow'), rule(null, 'everything', 'echo', 'deny')], 'ann', 'everything')).toBe(false)
})

test('a rule ending in * covers a prefix: more specific than *, less than an exact name, longer beats shorter', () => {
  const rules = [
    rule(null, 'docs', '*', 'allow'),
    rule(null, 'docs', 'resource:docs://private/*', 'deny'),
    rule(null, 'docs', 'resource:docs://private/shared/*', 'allow'),
    rule(null, 'docs', 'resource:docs://private/secret.txt', 'deny'),
    rule(null, 'docs', 'get-*', 'deny'),
  ]
  expect(mayUseTool(rules, 'ann', 'docs', 'resource:docs://public/a.txt')).toBe('allow')
  expect(mayUseTool(rules, 'ann', 'docs', 'resource:docs://private/plans.txt')).toBe('deny')
  expect(mayUseTool(rules, 'ann', 'docs', 'resource:docs://private/shared/menu.txt')).toBe('allow')
  expect(mayUseTool(rules, 'ann', 'docs', 'resource:docs://private/secret.txt')).toBe('deny')
  expect(mayUseTool(rules, 'ann', 'docs', 'get-sum')).toBe('deny')
  expect(mayUseTool(rules, 'ann', 'docs', 'echo')).toBe('allow')
  // A prefix rule on one server says nothing of another.
  expect(mayUseTool([...rules, rule(null, 'other', '*', 'allow')], 'ann', 'other', 'get-sum')).toBe('allow')
})
