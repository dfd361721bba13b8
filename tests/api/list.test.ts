import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { rowsOf } from '../helpers/typed-call.ts'

let p: TestPlatform
const agents: Array<{ id: string; name: string; timeout_seconds: number; enabled: boolean; created_at: string }> = []
// The first start's demo agent is left out, so the suite sees only the agents it made (a filter may repeat).
const list = (query: string) => p.call('GET', `/api/v1/AgentConfigRecord?name=neq.demo&${query}`)
const names = (reply: { body: { data: Array<{ name: string }> } }) => reply.body.data.map((a) => a.name)

beforeAll(async () => {
  p = await startTestPlatform()
  const specs = [
    ['alpha', 100, true],
    ['Beta', 200, true],
    ['gamma', 300, false],
    ['delta, the fourth', 400, true],
    ['epsilon', 500, false],
    ['zeta', 200, true],
    ['eta', 900, true],
  ] as const
  for (const [name, timeout_seconds, enabled] of specs) {
    const reply = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, timeout_seconds, enabled } })
    agents.push(reply.body)
  }
})
afterAll(() => p.close())

describe('filters', () => {
  test('eq, neq and the comparison operators', async () => {
    expect(names(await list('name=eq.gamma'))).toEqual(['gamma'])
    expect(names(await list('timeout_seconds=neq.200'))).toEqual(['alpha', 'gamma', 'delta, the fourth', 'epsilon', 'eta'])
    expect(names(await list('timeout_seconds=gt.400'))).toEqual(['epsilon', 'eta'])
    expect(names(await list('timeout_seconds=gte.400'))).toEqual(['delta, the fourth', 'epsilon', 'eta'])
    expect(names(await list('timeout_seconds=lt.200'))).toEqual(['alpha'])
    expect(names(await list('timeout_seconds=lte.200'))).toEqual(['alpha', 'Beta', 'zeta'])
  })

  test('like is case-sensitive, ilike is not; * is the wildcard', async () => {
    expect(names(await list('name=like.*eta'))).toEqual(['Beta', 'zeta', 'eta'])
    expect(names(await list('name=like.b*'))).toEqual([])
    expect(names(await list('name=ilike.b*'))).toEqual(['Beta'])
  })

  test('in takes a list, quotes protect commas', async () => {
    expect(names(await list('name=in.(alpha,zeta,nobody)'))).toEqual(['alpha', 'zeta'])
    expect(names(await list('name=in.("delta, the fourth",eta)'))).toEqual(['delta, the fourth', 'eta'])
    expect(names(await list(`id=in.(${agents[0]!.id},${agents[2]!.id})`))).toEqual(['alpha', 'gamma'])
  })

  test('is.true, is.false and is.null', async () => {
    expect(names(await list('enabled=is.false'))).toEqual(['gamma', 'epsilon'])
    expect(names(await list('enabled=eq.true&timeout_seconds=gte.300'))).toEqual(['delta, the fourth', 'eta'])
    const users = await p.call('GET', '/api/v1/User?avatar=is.null&select=username')
    expect(rowsOf(users.body)).toEqual([{ username: 'admin' }])
  })

  test('a repeated filter applies every condition (a range)', async () => {
    expect(names(await list('timeout_seconds=gte.200&timeout_seconds=lt.500'))).toEqual(['Beta', 'gamma', 'delta, the fourth', 'zeta'])
  })

  test('timestamps filter by ISO-8601 date-time', async () => {
    const all = await list(`created_at=gte.${encodeURIComponent(agents[0]!.created_at)}`)
    expect(all.body.data.length).toBe(7)
    expect(names(await list('created_at=lt.2000-01-01T00:00:00Z'))).toEqual([])
  })
})

describe('order, select, pagination and count', () => {
  test('order by several fields, ties broken by id', async () => {
    expect(names(await list('order=timeout_seconds.desc,name.asc'))).toEqual(['eta', 'epsilon', 'delta, the fourth', 'gamma', 'Beta', 'zeta', 'alpha'])
    expect(names(await list('order=timeout_seconds.asc'))).toEqual(['alpha', 'Beta', 'zeta', 'gamma', 'delta, the fourth', 'epsilon', 'eta'])
  })

  test('without order, records come in creation order', async () => {
    expect(names(await list(''))).toEqual(['alpha', 'Beta', 'gamma', 'delta, the fourth', 'epsilon', 'zeta', 'eta'])
  })

  test('select returns only the named fields', async () => {
    const reply = await list('select=name,timeout_seconds&name=eq.alpha')
    expect(rowsOf(reply.body)).toEqual([{ name: 'alpha', timeout_seconds: 100 }])
  })

  test('limit and offset page through without repeats; count=exact gives the total', async () => {
    const seen: string[] = []
    for (let offset = 0; offset < 7; offset += 3) {
      const page = await list(`order=timeout_seconds.asc&limit=3&offset=${offset}&count=exact`)
      expect(page.body).toMatchObject({ limit: 3, offset, count: 7 })
      seen.push(...names(page))
    }
    expect(seen).toEqual(['alpha', 'Beta', 'zeta', 'gamma', 'delta, the fourth', 'epsilon', 'eta'])
    const filtered = await list('enabled=is.true&count=exact&limit=1')
    expect(filtered.body.count).toBe(5)
    expect(filtered.body.data.length).toBe(1)
    expect((await list('')).body).not.toHaveProperty('count')
  })

  test('the default page is 50 and at most 500 can be asked for', async () => {
    expect((await list('')).body).toMatchObject({ limit: 50, offset: 0 })
    expect((await list('limit=500')).status).toBe(200)
  })
})

describe('bad list queries are 400 problems naming the parameter', () => {
  const cases: Array<[string, string, string]> = [
    ['nosuchfield=eq.1', 'nosuchfield', 'unknown field'],
    ['name=approx.alpha', 'name', 'unknown operator'],
    ['name=alpha', 'name', 'unknown operator'],
    ['timeout_seconds=eq.soon', 'timeout_seconds', 'not a whole number'],
    ['enabled=eq.maybe', 'enabled', 'not true or false'],
    ['id=eq.42', 'id', 'not a UUID'],
    ['created_at=gt.yesterday', 'created_at', 'ISO-8601'],
    ['timeout_seconds=like.1*', 'timeout_seconds', 'text fields only'],
    ['email=eq.x', 'email', 'JSON'],
    ['name=in.alpha', 'name', 'parentheses'],
    ['name=in.("open', 'name', 'parentheses'],
    ['name=is.alpha', 'name', 'is takes null'],
    ['order=name.sideways', 'order', 'field.asc or field.desc'],
    ['order=ghost.asc', 'order', 'unknown field'],
    ['order=channels.asc', 'order', 'JSON'],
    ['select=name,ghost', 'select', 'unknown field'],
    ['limit=0', 'limit', '1 to 500'],
    ['limit=501', 'limit', '1 to 500'],
    ['limit=ten', 'limit', '1 to 500'],
    ['offset=-1', 'offset', 'whole number'],
    ['count=approximate', 'count', 'exact'],
    ['limit=5&limit=6', 'limit', 'once'],
  ]
  test.each(cases)('%s', async (query, path, message) => {
    const problem = expectProblem(await list(query), 400, 'bad_request')
    expect(problem.errors).toContainEqual({ path, message: expect.stringContaining(message) })
  })

  test('several problems are reported together', async () => {
    const problem = expectProblem(await list('ghost=eq.1&limit=0&order=x.y'), 400, 'bad_request')
    expect(problem.errors!.map((e) => e.path).sort()).toEqual(['ghost', 'limit', 'order'])
  })
})

describe('values that must not be misread', () => {
  test('%, _ and backslash in a like pattern match themselves; only * is a wildcard', async () => {
    for (const name of ['100% sure', '100 percent sure', 'snake_case', 'snakeXcase', 'back\\slash']) {
      await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name } })
    }
    const like = async (pattern: string) => names(await list(`name=like.${encodeURIComponent(pattern)}`))
    expect(await like('100%*')).toEqual(['100% sure'])
    expect(await like('snake_*')).toEqual(['snake_case'])
    expect(await like('back\\*')).toEqual(['back\\slash'])
    expect(await like('*\\')).toEqual([])
  })

  test('a date-time needs its offset, a real date and a four-digit year', async () => {
    for (const bad of ['0', '2026-02-30T00:00:00Z', '2026-01-01T00:00:00', '+010000-01-01T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01']) {
      const problem = expectProblem(await list(`created_at=gt.${encodeURIComponent(bad)}`), 400, 'bad_request')
      expect(problem.errors![0]!.path).toBe('created_at')
    }
    expect((await list(`created_at=gt.${encodeURIComponent('2026-01-01T00:00:00+02:00')}`)).status).toBe(200)
  })

  test('a NUL character is refused in a filter and in a body, not passed to the store', async () => {
    expectProblem(await list('name=eq.a%00b'), 400, 'bad_request')
    expectProblem(await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'a\u0000b' } }), 400, 'bad_request')
    expectProblem(await p.call('POST', '/api/v1/SystemConfig', { json: { key: 'nul', value: { text: 'a\u0000b' } } }), 400, 'bad_request')
  })
})
