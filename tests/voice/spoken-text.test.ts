import { expect, test } from 'bun:test'
import { spokenText } from '../../src/voice/spoken-text.ts'

test('an answer in Markdown is said as words: no marks, links by their text, code named rather than read out', () => {
  const answer = [
    '## The plan',
    '',
    'You **must** book the room, see [the calendar](https://example.org/cal) and run `make deploy`.',
    '',
    '- first, *call* Ann',
    '1. then ~~never~~ write',
    '> a quote',
    '',
    '```sh',
    'rm -rf /tmp/x',
    '```',
    '',
    '---',
    'Done.',
  ].join('\n')
  expect(spokenText(answer)).toBe(
    ['The plan', '', 'You must book the room, see the calendar and run make deploy.', '', 'first, call Ann', 'then never write', 'a quote', '', '(There is code in the written answer.)', '', 'Done.'].join('\n'),
  )
})

test('plain words and snake_case names are left as they are; an unclosed fence does not swallow nothing', () => {
  expect(spokenText('Call plan_create at 5 * 3 = 15.')).toBe('Call plan_create at 5 * 3 = 15.')
  expect(spokenText('Before\n```\ncode without an end')).toBe('Before\n\n(There is code in the written answer.)')
})
