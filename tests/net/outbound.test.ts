import { afterAll, expect, test } from 'bun:test'
import { OutboundPolicy, OutboundRefused } from '../../src/net/outbound.ts'

// A self-signed certificate for upstream.invalid, made for this test only (valid 2000 to 2124).
const CERT = `-----BEGIN CERTIFICATE-----
MIIBdjCCARygAwIBAgIBATAKBggqhkjOPQQDAjAbMRkwFwYDVQQDDBB1cHN0cmVh
bS5pbnZhbGlkMCAXDTAwMDEwMTAwMDAwMFoYDzIxMjQwMTAxMDAwMDAwWjAbMRkw
FwYDVQQDDBB1cHN0cmVhbS5pbnZhbGlkMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD
QgAEwdWqxbspav/A/RklCFInOzZQKENJYeYcjRkGbTO31y/BLfAs1Zy60QsC65eg
XlzgX5R8en8sJWjI1UjULCadiaNPME0wGwYDVR0RBBQwEoIQdXBzdHJlYW0uaW52
YWxpZDAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBTtUUUykiMpcW5+29YOYrTS
Gm2UcTAKBggqhkjOPQQDAgNIADBFAiEAx3VhVFTS9fJ8Xay+q8gfL4DItB0SbC/G
6T0QkT4RnxcCIGeaO9/GNUD/2WRFX3bEE+bqItD6YyqQ+jc1aeQH7nKo
-----END CERTIFICATE-----`
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBbpsEvTUZJcTECTZ
nKz/R4MDC3EaCFzZIjlzCbKEfwGhRANCAATB1arFuylq/8D9GSUIUic7NlAoQ0lh
5hyNGQZtM7fXL8Et8CzVnLrRCwLrl6BeXOBflHx6fywlaMjVSNQsJp2J
-----END PRIVATE KEY-----`

const seen: { host: string | null; path: string; body: string }[] = []
async function answer(request: Request): Promise<Response> {
  const url = new URL(request.url)
  seen.push({ host: request.headers.get('host'), path: url.pathname, body: await request.text() })
  if (url.pathname === '/fail') {
    return new Response('stack trace: secret internal detail', { status: 500, headers: { 'www-authenticate': 'Bearer realm="mcp"', 'x-upstream': 'kept' } })
  }
  if (url.pathname === '/bounce') return new Response('moved', { status: 302, headers: { location: `http://127.0.0.1:${inner.port}/inside` } })
  return new Response(`hello from ${url.pathname}`)
}

const upstream = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: answer })
const secure = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: CERT, key: KEY }, fetch: answer })
let innerHits = 0
const inner = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => {
    innerHits++
    return new Response('internal')
  },
})
afterAll(() => {
  for (const server of [upstream, secure, inner]) server.stop(true)
})

async function refusal(promise: Promise<unknown>): Promise<OutboundRefused> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(OutboundRefused)
  return error as OutboundRefused
}

const HINT = 'the platform does not connect to loopback, private or link-local addresses unless the operator allows them (SWITCHBOARD_OUTBOUND_ALLOW)'

const refused = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b:1::1]/',
  'http://[2002:7f00:1::1]/',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://100.64.0.1/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[fd12::1]/',
  'http://[fec0::1]/',
  'http://224.0.0.1/',
  'http://[ff02::1]/',
  'http://255.255.255.255/',
  'http://192.0.2.1/',
  'http://198.51.100.7/',
  'http://198.18.0.1/',
  'http://240.0.0.1/',
  'http://[2001:db8::1]/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://mcp.localhost:3000/',
  'http://nothing-here.invalid/',
  'ftp://93.184.215.14/',
  'file:///etc/passwd',
  'not a url',
]

test.each(refused)('%s is refused', async (url) => {
  await refusal(new OutboundPolicy().check(url))
})

test('the refusal names the address, its kind and the operator setting', async () => {
  const policy = new OutboundPolicy()
  expect((await refusal(policy.check('http://127.0.0.1:9/'))).message).toBe(`http://127.0.0.1:9/ resolves to 127.0.0.1, a loopback address; ${HINT}`)
  expect((await refusal(policy.check('http://169.254.169.254/latest'))).message).toContain('169.254.169.254, a link-local address')
  expect((await refusal(policy.check('http://10.0.0.1/'))).message).toContain('a private (RFC 1918) address')
  expect((await refusal(policy.check('http://[::ffff:127.0.0.1]/'))).message).toContain('::ffff:7f00:1, an IPv6 form of 127.0.0.1, a loopback address')
  expect((await refusal(policy.check('http://[fd12::1]/'))).message).toContain('a unique-local (private IPv6) address')
  expect((await refusal(policy.check('http://nothing-here.invalid/'))).message).toContain('does not resolve')
  expect((await refusal(policy.check('file:///etc/passwd'))).message).toContain('only over http: and https:')
})

test('the refusal never shows credentials or the query of the URL', async () => {
  const error = await refusal(new OutboundPolicy().check('http://admin:hunter2@10.0.0.1/mcp?api_key=abc#frag'))
  expect(error.message).toStartWith('http://10.0.0.1/mcp resolves to 10.0.0.1')
  expect(error.message).not.toContain('hunter2')
  expect(error.message).not.toContain('abc')
})

test.each(['http://93.184.215.14/', 'https://[2606:4700::1111]/mcp', 'http://[::ffff:93.184.215.14]/', 'http://[64:ff9b::5db8:d70e]/'])(
  '%s is public and passes',
  async (url) => {
    const { addresses } = await new OutboundPolicy().check(url)
    expect(addresses).toHaveLength(1)
  },
)

test('a name is refused when any of its addresses is refused', async () => {
  const policy = new OutboundPolicy([], { resolve: async () => ['93.184.215.14', '10.0.0.1'] })
  expect((await refusal(policy.check('https://mcp.invalid/'))).message).toContain('10.0.0.1, a private (RFC 1918) address')
})

test('a public name passes with all its addresses', async () => {
  const policy = new OutboundPolicy([], { resolve: async () => ['2606:4700::1111', '93.184.215.14'] })
  const { url, addresses } = await policy.check('https://MCP.invalid/path')
  expect(url.hostname).toBe('mcp.invalid')
  expect(addresses).toEqual(['93.184.215.14', '2606:4700::1111'])
})

test('the operator can allow a range, and only that range', async () => {
  const policy = new OutboundPolicy(['127.0.0.0/8', 'fd12::/16'])
  expect((await policy.check('http://127.0.0.1/')).addresses).toEqual(['127.0.0.1'])
  expect((await policy.check('http://[::ffff:127.0.0.1]/')).addresses).toEqual(['::ffff:7f00:1'])
  expect((await policy.check('http://[fd12::1]/')).addresses).toEqual(['fd12::1'])
  await refusal(policy.check('http://[::1]/'))
  await refusal(policy.check('http://10.0.0.1/'))
})

test.each(['10.0.0.0/33', 'not-a-range', '127.1/8', '::1/129', '10.0.0.0/'])('the invalid range %s throws naming it', (range) => {
  expect(() => new OutboundPolicy(['10.1.0.0/16', range])).toThrow(range)
})

test('valid ranges and single addresses are accepted', () => {
  expect(() => new OutboundPolicy(['127.0.0.0/8', '10.1.0.0/16', '::1/128', '192.168.1.5', 'fd00::1'])).not.toThrow()
})

test('fetch reaches an allowed loopback server and keeps a 2xx body', async () => {
  const policy = new OutboundPolicy(['127.0.0.0/8'])
  const response = await policy.fetch(`http://127.0.0.1:${upstream.port}/hello`, { method: 'POST', body: 'ping' })
  expect(response.status).toBe(200)
  expect(await response.text()).toBe('hello from /hello')
  expect(seen.at(-1)).toEqual({ host: `127.0.0.1:${upstream.port}`, path: '/hello', body: 'ping' })
})

test('fetch refuses loopback when the operator has not allowed it, before connecting', async () => {
  const before = seen.length
  await refusal(new OutboundPolicy().fetch(`http://127.0.0.1:${upstream.port}/hello`))
  expect(seen.length).toBe(before)
})

test('fetch sends the original name as Host when the URL uses localhost', async () => {
  const policy = new OutboundPolicy(['127.0.0.0/8', '::1/128'])
  const response = await policy.fetch(`http://localhost:${upstream.port}/named`)
  expect(await response.text()).toBe('hello from /named')
  expect(seen.at(-1)?.host).toBe(`localhost:${upstream.port}`)
})

test('fetch connects to the address it checked, not to a second DNS answer', async () => {
  const policy = new OutboundPolicy(['127.0.0.0/8'], { resolve: async () => ['127.0.0.1'] })
  // The real DNS has no answer for .invalid: reaching the server proves the connection went to the checked address.
  const response = await policy.fetch(new Request(`http://upstream.invalid:${upstream.port}/pinned`, { method: 'PUT', body: 'data' }))
  expect(await response.text()).toBe('hello from /pinned')
  expect(seen.at(-1)).toEqual({ host: `upstream.invalid:${upstream.port}`, path: '/pinned', body: 'data' })
})

test('fetch judges the name again on every request (DNS rebinding)', async () => {
  let answer = '93.184.215.14'
  const policy = new OutboundPolicy([], { resolve: async () => [answer] })
  await policy.check(`http://rebind.invalid:${upstream.port}/`)
  answer = '127.0.0.1'
  const before = seen.length
  expect((await refusal(policy.fetch(`http://rebind.invalid:${upstream.port}/`))).message).toContain('127.0.0.1, a loopback address')
  expect(seen.length).toBe(before)
})

test('https keeps the certificate check for the name while connecting to the checked address', async () => {
  const policy = new OutboundPolicy(['127.0.0.0/8'], { resolve: async () => ['127.0.0.1'] })
  const response = await policy.fetch(`https://upstream.invalid:${secure.port}/tls`, { tls: { ca: CERT } } as BunFetchRequestInit)
  expect(await response.text()).toBe('hello from /tls')
  expect(seen.at(-1)?.host).toBe(`upstream.invalid:${secure.port}`)

  // The same address under a name the certificate does not cover fails: the check is against the name.
  const impostor = new OutboundPolicy(['127.0.0.0/8'], { resolve: async () => ['127.0.0.1'] })
  await expect(impostor.fetch(`https://impostor.invalid:${secure.port}/tls`, { tls: { ca: CERT } } as BunFetchRequestInit)).rejects.toMatchObject({
    code: 'ERR_TLS_CERT_ALTNAME_INVALID',
  })
})

test('a non-2xx answer keeps its status and headers but loses its body', async () => {
  const response = await new OutboundPolicy(['127.0.0.0/8']).fetch(`http://127.0.0.1:${upstream.port}/fail`)
  expect(response.status).toBe(500)
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="mcp"')
  expect(response.headers.get('x-upstream')).toBe('kept')
  expect(await response.text()).toBe('')
})

test('a redirect comes back as is and is not followed', async () => {
  const response = await new OutboundPolicy(['127.0.0.0/8']).fetch(`http://127.0.0.1:${upstream.port}/bounce`)
  expect(response.status).toBe(302)
  expect(response.headers.get('location')).toBe(`http://127.0.0.1:${inner.port}/inside`)
  expect(await response.text()).toBe('')
  expect(innerHits).toBe(0)
})
