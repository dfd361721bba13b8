import { afterAll, beforeAll, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import type { Browser } from 'playwright-core'
import { checkAccessibility } from '../helpers/accessibility.ts'
import { HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { idpIssuer, startTestIdp, type TestIdp } from '../helpers/oidc-idp.ts'
import { freePort } from '../helpers/ports.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A person signs in through the company's identity provider in Chromium: from a deep link, to the sign-in page,
// to the provider (a real OpenID Connect provider on loopback) and back, landing where they were going.

warnWithoutChromium()

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir()
const CLIENT = { client_id: 'switchboard', client_secret: 'client-secret-for-the-browser-tests-01' }
const port = freePort()
let browser: Browser
let p: ChatPlatform
let idp: TestIdp
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform({ SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8', SWITCHBOARD_OIDC_ALLOW_HTTP: 'true' })])
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name: 'idp/secret', value: CLIENT.client_secret } })).status).toBe(200)
  const made = await p.call('POST', '/api/v1/IdentityProvider', {
    // Listed by the superadmin, so the shared sign-in page offers it.
    json: { slug: 'corp', name: 'Corp SSO', listed: true, issuer: idpIssuer(port), client_id: CLIENT.client_id, client_secret_secret: 'idp/secret', scopes: 'openid email profile groups', role_mapping: [{ group: 'leads', role: 'admin' }] },
  })
  expect(made.status).toBe(201)
  idp = await startTestIdp([{ ...CLIENT, redirect_uris: [`${p.services.config.adminBaseUrl}/auth/sso/corp/callback`] }], port)
  idp.accounts.set('linus', { email: 'linus@corp.example', email_verified: true, name: 'Linus Example', groups: ['leads'] })
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await idp?.stop()
  await p?.close()
})

test.skipIf(!HAS_CHROMIUM)('a deep link, “Sign in with Corp SSO”, the provider, and back on the deep link as the person with the mapped role', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await watchContext(context, [p.services.config.adminBaseUrl, idpIssuer(port)], watched)
  const page = await context.newPage()
  try {
    idp.state.loginAs = 'linus'
    await page.goto(`${p.services.config.adminBaseUrl}/usage?range=30d`)
    expect(new URL(page.url()).pathname).toBe('/login')
    const button = page.getByRole('link', { name: 'Sign in with Corp SSO' })
    await button.waitFor()
    await checkAccessibility(page, 'sign-in page with a provider')
    await page.screenshot({ path: `${SCREENSHOTS}/sso-login-1280.png`, caret: 'initial' })
    const hops: string[] = []
    page.on('request', (request) => request.isNavigationRequest() && hops.push(new URL(request.url()).origin))
    await Promise.all([page.waitForURL((url) => url.pathname === '/usage'), button.click()])
    expect(new URL(page.url()).search).toBe('?range=30d')
    // It went through the provider.
    expect(hops).toContain(idpIssuer(port))
    const user = await p.store.db.selectFrom('users').select(['id', 'display_name']).where('email', '=', 'linus@corp.example').executeTakeFirstOrThrow()
    expect(user.display_name).toBe('Linus Example')
    const role = await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', user.id).executeTakeFirstOrThrow()
    expect(role.role).toBe('admin')
    expect(await page.getByRole('link', { name: 'Linus Example' }).count()).toBeGreaterThan(0)
  } finally {
    await context.close()
  }
}, 60_000)

test.skipIf(!HAS_CHROMIUM)('a refusal comes back to the sign-in page in words', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } })
  await watchContext(context, [p.services.config.adminBaseUrl, idpIssuer(port)], watched)
  const page = await context.newPage()
  try {
    idp.accounts.set('nobody', { email: `${(await p.createUser()).username}@example.com`, email_verified: false })
    idp.state.loginAs = 'nobody'
    await page.goto(`${p.services.config.adminBaseUrl}/login`)
    // The provider does not link by email: someone whose email an account has already is not let into it.
    await Promise.all([page.waitForURL((url) => url.searchParams.get('error') === 'sso_exists'), page.getByRole('link', { name: 'Sign in with Corp SSO' }).click()])
    await page.getByText('An account with this email exists already').waitFor()
    await checkAccessibility(page, 'sign-in refusal')
    await page.screenshot({ path: `${SCREENSHOTS}/sso-refused-390.png`, caret: 'initial' })
  } finally {
    await context.close()
  }
}, 60_000)

test.skipIf(!HAS_CHROMIUM)('no page broke its Content-Security-Policy, loaded anything from another origin or opened a dialog', () => {
  expect(watched.violations).toEqual([])
  expect(watched.foreign).toEqual([])
  expect(watched.dialogs).toEqual([])
})
