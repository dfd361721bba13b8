import { describe, expect, test } from 'bun:test'
import { localRedirect } from '../../src/auth/redirect.ts'
import { ADMIN_PASSWORD, usePlatform } from '../helpers/platform.ts'

const ORIGINS = ['http://127.0.0.1:8080', 'http://127.0.0.1:8000']
const HOME = 'http://127.0.0.1:8080'

/** What a browser would do with the answer: follow it from our page and stay on our origin. */
function expectSameOriginPath(location: string) {
  expect(location.startsWith('/')).toBe(true)
  expect(location.startsWith('//')).toBe(false)
  expect(location.startsWith('/\\')).toBe(false)
  expect(location).not.toMatch(/[\u0000-\u001f\u007f-\u009f\\]/)
  expect(new URL(location, HOME).origin).toBe(HOME)
}

// Each shape has been used somewhere to leave a site through a "local" redirect parameter.
const bypasses: [string, string][] = [
  ['//evil.example', '/'],
  ['///evil.example', '/'],
  ['////evil.example', '/'],
  ['//user@evil.example', '/'],
  ['//127.0.0.1:8080@evil.example', '/'],
  ['/\\evil.example', '/'],
  ['\\/evil.example', '/'],
  ['/\\/evil.example', '/'],
  ['\\\\evil.example', '/'],
  ['/%2F%2Fevil.example', '/'],
  ['/%2f/evil.example', '/'],
  ['%2F%2Fevil.example', '/'],
  ['/%5Cevil.example', '/'],
  ['%2F%5Cevil.example', '/'],
  ['/%252F%252Fevil.example', '/'],
  ['/%25252F%25252Fevil.example', '/'],
  ['/%252e%252e%252F%252Fevil.example', '/'],
  ['https%3A%2F%2Fevil.example', '/'],
  ['/\t/evil.example', '/'],
  ['/\n/evil.example', '/'],
  ['/\r\n/evil.example', '/'],
  ['/%09/evil.example', '/'],
  ['/%0A/evil.example', '/'],
  ['/.//evil.example', '/'],
  ['/./..//evil.example', '/'],
  ['/a/../..//evil.example', '/'],
  ['/%2e//evil.example', '/'],
  ['/%2E%2E//evil.example', '/'],
  ['/a/..%2F..%2F%2Fevil.example', '/'],
  ['javascript:alert(1)', '/'],
  ['JaVaScRiPt:alert(1)', '/'],
  ['javascript%3Aalert(1)', '/'],
  ['data:text/html,<script>alert(1)</script>', '/'],
  ['http://evil.example', '/'],
  ['HTTPS://evil.example', '/'],
  ['https:evil.example', '/'],
  ['http:/evil.example', '/'],
  ['http:\\\\evil.example', '/'],
  ['\uff0f\uff0fevil.example', '/'],
  [' //evil.example', '/'],
  [' /agents', '/'],
  ['\u00a0/agents', '/'],
  ['/agents\u0000', '/'],
  ['/%00/evil.example', '/'],
  ['/\u0085/evil.example', '/'],
  ['/%E0%A4%A', '/'],
  ['', '/'],
  ['evil.example', '/'],
  // Shapes that look alarming but are paths on this site, and stay so.
  ['/@evil.example', '/@evil.example'],
  ['/\u3002/evil.example', '/%E3%80%82/evil.example'],
  ['/a//evil.example', '/a//evil.example'],
]

describe('localRedirect', () => {
  test.each(bypasses)('%j lands on %j', (attack, expected) => {
    const location = localRedirect(attack, ORIGINS)
    expect(location).toBe(expected)
    expectSameOriginPath(location)
    // Without the platform's origins the answer is the same: none of these is an absolute URL of ours.
    expect(localRedirect(attack)).toBe(expected)
  })

  test('a target longer than any link of ours lands on /', () => {
    expect(localRedirect(`/${'a'.repeat(5000)}`)).toBe('/')
    expect(localRedirect(`/${'%2F'.repeat(2000)}evil.example`)).toBe('/')
  })

  test('local paths keep their query and fragment', () => {
    expect(localRedirect('/')).toBe('/')
    expect(localRedirect('/agents?x=1#y')).toBe('/agents?x=1#y')
    expect(localRedirect('/users?q=ada&page=2#top')).toBe('/users?q=ada&page=2#top')
    expect(localRedirect('/users?q=ada%20lovelace')).toBe('/users?q=ada%20lovelace')
    expect(localRedirect('/companies/./x/../list')).toBe('/companies/list')
    expect(localRedirect(undefined)).toBe('/')
    expect(localRedirect(42)).toBe('/')
  })

  test('an absolute URL exactly on one of the platform origins comes back normalized', () => {
    expect(localRedirect('http://127.0.0.1:8080/agents?x=1#y', ORIGINS)).toBe('http://127.0.0.1:8080/agents?x=1#y')
    expect(localRedirect('HTTP://127.0.0.1:8000', ORIGINS)).toBe('http://127.0.0.1:8000/')
    expect(localRedirect('http://127.0.0.1:8080/a/../b', ORIGINS)).toBe('http://127.0.0.1:8080/b')
    // Without the origins, nothing absolute is ours.
    expect(localRedirect('http://127.0.0.1:8080/agents')).toBe('/')
  })

  test.each([
    'http://127.0.0.1:8080@evil.example/',
    'http://admin:pw@127.0.0.1:8080/',
    'http://user@127.0.0.1:8080/',
    '127.0.0.1:8080.evil.example',
    'http://127.0.0.1:8080.evil.example/',
    'http://127.0.0.1:80800/',
    'https://127.0.0.1:8080/',
    'http://127.0.0.1:9090/',
    'http://localhost:8080/',
    'http://127.0.0.1:8080\\@evil.example/',
    'http://127.0.0.1:8080\t/agents',
    ' http://127.0.0.1:8080/',
    'ws://127.0.0.1:8080/',
    // On our origin, but with a path that reads as another site once taken on its own.
    'http://127.0.0.1:8080//evil.example/',
    'http://127.0.0.1:8080/..//evil.example',
    'http://127.0.0.1:8080/%2F%2Fevil.example',
  ])('%j is not on the platform origins and lands on /', (attack) => {
    expect(localRedirect(attack, ORIGINS)).toBe('/')
  })
})

describe('POST /auth/login', () => {
  const p = usePlatform()

  test.each([
    ['/.//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['/%2F%2Fevil.example', '/'],
    ['/a/../..//evil.example', '/'],
    ['https://evil.example', '/'],
    ['/agents?x=1#y', '/agents?x=1#y'],
  ])('a form sign-in to %j answers a Location on this site', async (target, expected) => {
    const reply = await p().call('POST', '/auth/login', {
      as: null,
      body: new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD, post_login_redirect: target }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(reply.status).toBe(303)
    const location = reply.headers.get('location')!
    expect(location).toBe(expected)
    expectSameOriginPath(location)
  })
})
