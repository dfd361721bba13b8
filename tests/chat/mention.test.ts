import { expect, test } from 'bun:test'
import { mentions } from '../../src/chat/mention.ts'

test('an @mention of the agent is found in any case, at a word boundary', () => {
  expect(mentions('@helpdesk what is new?', 'helpdesk')).toBe(true)
  expect(mentions('hi @HelpDesk.', 'helpdesk')).toBe(true)
  expect(mentions('(@helpdesk) please', 'helpdesk')).toBe(true)
  expect(mentions('helpdesk, are you there?', 'helpdesk')).toBe(false)
  expect(mentions('@helpdesk2 is another agent', 'helpdesk')).toBe(false)
  expect(mentions('@helpdesk-bot is another agent', 'helpdesk')).toBe(false)
  expect(mentions('mail me at me@helpdesk.example', 'helpdesk')).toBe(false)
})

test('a name with spaces may be written with spaces, hyphens or underscores', () => {
  expect(mentions('@Help desk can you?', 'Help desk')).toBe(true)
  expect(mentions('@help-desk can you?', 'Help desk')).toBe(true)
  expect(mentions('@help_desk', 'Help desk')).toBe(true)
  expect(mentions('@help', 'Help desk')).toBe(false)
})

test('characters that mean something in a pattern are taken literally', () => {
  expect(mentions('@a.b hello', 'a.b')).toBe(true)
  expect(mentions('@axb hello', 'a.b')).toBe(false)
  expect(mentions('@c++ hi', 'c++')).toBe(true)
})
