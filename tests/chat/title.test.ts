import { expect, test } from 'bun:test'
import { titleOf } from '../../src/chat/title.ts'

test('a title is the first sentence of the first message, without markdown, links or code fences', () => {
  expect(titleOf('Can you summarise the Q3 report? It is attached.')).toBe('Can you summarise the Q3 report?')
  expect(titleOf('## **Launch** plan for [Tuesday](https://example.com/t)')).toBe('Launch plan for Tuesday')
  expect(titleOf('```js\nconst a = 1\n```\nwhy does this fail')).toBe('const a = 1')
  expect(titleOf('see https://example.com/a/very/long/link please')).toBe('see please')
  expect(titleOf('hello')).toBe('hello')
})

test('a command is named by its words, not by the JSON it carries', () => {
  expect(titleOf('/tool mcp-planning__plan_create {"name":"Launch","tasks":[1,2,3]}')).toBe('tool mcp-planning__plan_create')
  // The agent addressed first, in a shared conversation: the title is what follows.
  expect(titleOf('@careful /tool mcp-planning__plan_create {"title":"x"}')).toBe('tool mcp-planning__plan_create')
  expect(titleOf('@helpdesk, where is the quarterly report kept?')).toBe('where is the quarterly report kept?')
  expect(titleOf('/slow 100 tell me a story')).toBe('slow 100 tell me a story')
})

test('a long first line is cut at a word within 60 characters', () => {
  const title = titleOf('please go through every single one of the invoices from last year and tell me which were paid late and by how much')
  expect(title.length).toBeLessThanOrEqual(61)
  expect(title.endsWith('…')).toBe(true)
  expect(title).toBe('please go through every single one of the invoices from…')
  // A word longer than the limit is cut where it must be.
  expect(titleOf('x'.repeat(100))).toBe(`${'x'.repeat(60)}…`)
})
