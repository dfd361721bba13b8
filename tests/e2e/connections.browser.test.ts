import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startOAuthRemote, type OAuthRemote } from '../fixtures/mcp/oauth-remote.ts'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, warnWithoutChromium } from '../helpers/browser.ts'
import { startOAuthPlatform, type OAuthPlatform } from '../helpers/oauth.ts'

// A person connects their own account on a remote MCP server that signs people in with OAuth, in Chromium: the
// console's Connect button, the remote's sign-in (another origin), and the way back to the console's callback,
// which the browser marks as coming from elsewhere (Sec-Fetch-Site) and which must still finish the flow.

warnWithoutChromium()

let browser: Browser
let p: OAuthPlatform
let remote: OAuthRemote

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p, remote] = await Promise.all([launchChromium(), startOAuthPlatform(), startOAuthRemote()])
  const made = await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url: remote.url, oauth: true } })
  expect(made.status).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: 'remote', tool: '*', effect: 'allow' } })).status).toBe(201)
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
  await remote?.close()
})

test.skipIf(!HAS_CHROMIUM)('Connect goes to the remote’s sign-in and back, and the account is connected', async () => {
  const person = await p.person()
  const context = await browser.newContext()
  try {
    await addSessionCookie(context, p.adminUrl, person.cookie)
    const page = await context.newPage()
    const callbacks: Array<Record<string, string>> = []
    page.on('request', (request) => {
      if (request.url().startsWith(`${p.adminUrl}/me/connections/callback`)) callbacks.push(request.headers())
    })
    await page.goto(`${p.adminUrl}/me/connections`)
    await page.getByRole('button', { name: 'Connect' }).click()
    await page.waitForURL(`${p.adminUrl}/me/connections?connected=remote`, { timeout: 10_000 })
    // The browser came back from another origin, and said so.
    expect(callbacks).toHaveLength(1)
    expect(callbacks[0]!['sec-fetch-site']).not.toBe('same-origin')
    expect(await page.locator('#connection-remote').textContent()).toContain('Connected')
    expect((await p.call('GET', '/api/mcp/connections', { as: person })).body.data).toEqual([expect.objectContaining({ server: 'remote', status: 'connected' })])
  } finally {
    await context.close()
  }
})
