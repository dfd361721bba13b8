import { expect, test } from 'bun:test'
import { localRedirect } from '../../src/auth/redirect.ts'

const attacks = [
  '//evil.example',
  'https://evil.example',
  '/\\evil.example',
  'javascript:alert(1)',
  '%2F%2Fevil.example',
  'https%3A%2F%2Fevil.example',
  '%2F%5Cevil.example',
  'javascript%3Aalert(1)',
  '%252F%252Fevil.example',
  '/%2F/evil.example',
  '/%5Cevil.example',
  '\\\\evil.example',
  '/\t/evil.example',
  ' //evil.example',
  'HTTPS://evil.example',
  '',
  '%E0%A4%A',
]

test.each(attacks)('%j lands on /', (attack) => {
  expect(localRedirect(attack)).toBe('/')
})

test('local paths keep their query and fragment', () => {
  expect(localRedirect('/users?q=ada&page=2#top')).toBe('/users?q=ada&page=2#top')
  expect(localRedirect('/companies')).toBe('/companies')
  expect(localRedirect(undefined)).toBe('/')
})
