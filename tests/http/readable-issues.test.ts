import { expect, test } from 'bun:test'
import { z } from '@hono/zod-openapi'
import { zodErrors } from '../../src/errors.ts'

// What a person reads when a value is refused: plain words, the field named by its path; a schema's own words kept.
const messagesOf = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value)
  if (parsed.success) throw new Error('expected a refusal')
  return zodErrors(parsed.error).map((e) => `${e.path}: ${e.message}`)
}

test('zod’s own messages become plain words', () => {
  const schema = z.strictObject({
    name: z.string().trim().min(1).max(10),
    title: z.string().min(3),
    count: z.int().min(1).max(5),
    tags: z.array(z.string()).min(1).max(2),
    email: z.email(),
    id: z.uuid(),
    when: z.iso.datetime({ offset: true }),
    kind: z.enum(['text', 'image']),
    flag: z.boolean(),
  })
  expect(messagesOf(schema, { name: '', title: 'ab', count: 0, tags: [], email: 'nope', id: 'x', when: 'soon', kind: 'pdf', flag: 'yes' })).toEqual([
    'name: must not be empty',
    'title: must be at least 3 characters',
    'count: must be at least 1',
    'tags: must have at least 1 item',
    'email: must be an email address',
    'id: must be an id (a UUID)',
    'when: must be a date and time, such as 2026-11-27T09:30:00Z',
    'kind: must be one of: "text", "image"',
    'flag: must be true or false',
  ])
  expect(messagesOf(schema, { name: 'x'.repeat(11), title: 'abc', count: 9, tags: ['a', 'b', 'c'], email: 'a@b.co', id: crypto.randomUUID(), when: '2026-11-27T09:30:00Z', kind: 'text', flag: true })).toEqual([
    'name: must be at most 10 characters',
    'count: must be at most 5',
    'tags: must have at most 2 items',
  ])
  expect(messagesOf(schema, {})).toContain('name: is required')
  expect(messagesOf(z.object({ n: z.number() }), { n: 'seven' })).toEqual(['n: must be a number'])
})

test('a message the schema chose is kept as written', () => {
  expect(messagesOf(z.object({ slug: z.string().regex(/^[a-z]+$/, 'lowercase letters only') }), { slug: 'A' })).toEqual(['slug: lowercase letters only'])
  expect(messagesOf(z.object({ v: z.string().refine(() => false, 'never good') }), { v: 'x' })).toEqual(['v: never good'])
})
