/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { FieldError } from '../../errors.ts'
import { isUuid } from '../../models/fields.ts'
import { bodyOf, problemOf, refusedHere, type ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { mountChannelsPage } from './channels.tsx'
import { ConfirmEmailPage } from './confirm-email.tsx'
import { AvatarSection, EmailSection, PasswordSection, PortalPage, ProfileSection, TokensSection, type Outcome, type PortalState, type Profile, type Token } from './components.tsx'

type Ctx = Context<AdminEnv>

const TITLE = 'Your account'
const ASSETS = { styles: ['/static/css/portal.css'] }
const STALE_PROFILE = 'This profile was changed by someone else (or in another tab); reload to see the current values.'
// The API holds a picture to 256 KiB; here the whole form is held to that and room for the form around it, so a
// huge upload is refused while it arrives rather than buffered to be forwarded.
const MAX_AVATAR_FORM_BYTES = 256 * 1024 + 16 * 1024

/** A fragment for htmx, the whole page for a plain browser request. */
function isFragment(c: Ctx): boolean {
  return c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'
}

/** What the API said went wrong: each field's message by its field, the detail for anything else. */
function refusal(response: Response, error: unknown, fallback: string): Outcome {
  const problem = problemOf(error)
  const errors: FieldError[] = problem.errors ?? []
  if (response.status === 422 && errors.length > 0) return { errors, message: 'Please correct the fields marked above.' }
  return { message: problem.detail ?? `${fallback} (${response.status}).` }
}

/** A 4xx answer for a refused write, so scripts and tests can tell; htmx swaps it in all the same. */
const statusOf = (status: number) => (status === 412 || status === 413 || status === 415 || status === 422 || status === 429 ? status : 400)

const text = (form: Record<string, unknown>, name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '')

/** The profile as the portal shows it, with the version to send back when it is saved. */
function profileOf(user: { username: string; display_name: string; email: string; avatar?: string | null }, response: Response): Profile {
  const { username, display_name, email, avatar } = user
  return { username, display_name, email, avatar: avatar ?? null, etag: response.headers.get('etag') ?? '' }
}

async function readProfile(c: Ctx, api: ApiClient): Promise<Profile> {
  const { data, error, response } = await api.as(c).GET('/api/v1/User/{id}', { params: { path: { id: c.get('me').user.id } } })
  if (!data) throw new Error(problemOf(error).detail ?? `Reading your profile failed (${response.status}).`)
  return profileOf(data, response)
}

async function readTokens(c: Ctx, api: ApiClient): Promise<Token[]> {
  const { data, error, response } = await api.as(c).GET('/api/v1/ApiToken', { params: { query: { order: 'created_at.desc', limit: '100' } } })
  if (!data) throw new Error(problemOf(error).detail ?? `Listing your tokens failed (${response.status}).`)
  return data.data
}

/**
 * The answer to a section's form: that section for htmx, else the whole page with it in place (no redirect, so a
 * token made just now can be shown, and a refused form keeps what was typed).
 */
async function answer(c: Ctx, api: ApiClient, status: number, section: () => Promise<any>, page: Partial<PortalState>): Promise<Response> {
  c.status(status as 200)
  if (isFragment(c)) return c.html(await section())
  const state: PortalState = { profile: page.profile ?? (await readProfile(c, api)), tokens: page.tokens ?? (await readTokens(c, api)), ...page }
  return c.render(<PortalPage state={state} />, { title: TITLE, assets: ASSETS })
}

/** GET /me and its forms, and /me/channels: the signed-in user's own account, every read and write through the public API as them. */
export function mountPortal(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/me', async (c) => {
    const [profile, tokens] = await Promise.all([readProfile(c, api), readTokens(c, api)])
    const page = <PortalPage state={{ profile, tokens }} />
    if (isFragment(c)) return c.html(page)
    return c.render(page, { title: TITLE, assets: ASSETS })
  })

  app.post('/me/profile', async (c) => {
    const form = await c.req.parseBody()
    const values = { display_name: text(form, 'display_name') }
    const etag = text(form, 'etag')
    const { data, error, response } = await api.as(c, { ifMatch: etag }).PATCH('/api/v1/User/{id}', { params: { path: { id: c.get('me').user.id } }, body: values })
    if (data) {
      const profile = profileOf(data, response)
      const profileOutcome = { notice: 'Your profile is saved.' }
      return answer(c, api, 200, async () => <ProfileSection profile={profile} outcome={profileOutcome} />, { profile, profileOutcome })
    }
    // What was typed stays, with the version it was typed over: saving again is refused until the page is reloaded.
    const current = await readProfile(c, api)
    const profile: Profile = { ...current, ...values, etag }
    const profileOutcome = response.status === 412 ? { message: STALE_PROFILE } : refusal(response, error, 'Saving your profile failed')
    return answer(c, api, statusOf(response.status), async () => <ProfileSection profile={profile} outcome={profileOutcome} />, { profile, profileOutcome })
  })

  app.post('/me/email', async (c) => {
    const form = await c.req.parseBody()
    const { data, error, response } = await api.as(c).POST('/api/me/email', { body: { email: text(form, 'email') } })
    const emailOutcome = data ? { notice: `A link is on its way to ${data.sent_to}. Open it while signed in here to make it your address.` } : refusal(response, error, 'Asking for a new address failed')
    const profile = await readProfile(c, api)
    return answer(c, api, data ? 200 : statusOf(response.status), async () => <EmailSection email={profile.email} outcome={emailOutcome} />, { profile, emailOutcome })
  })

  // Where the link mailed to a new address lands: a button, so that a mail scanner opening links confirms nothing.
  app.get('/confirm-email', (c) => c.render(<ConfirmEmailPage token={c.req.query('token') ?? ''} />, { title: 'Confirm your address' }))
  app.post('/confirm-email', async (c) => {
    const form = await c.req.parseBody()
    const { data, error, response } = await api.as(c).POST('/api/me/email/confirm', { body: { token: text(form, 'token') } })
    if (!data) c.status(statusOf(response.status) as 400)
    // The token is no field the person can correct: the problem's own words say what to do.
    const outcome = data ? { notice: `Your address is now ${data.email}.` } : { message: problemOf(error).detail ?? `Confirming the address failed (${response.status}).` }
    return c.render(<ConfirmEmailPage token="" outcome={outcome} />, { title: 'Confirm your address' })
  })

  const avatarAnswer = async (c: Ctx, status: number, avatarOutcome: Outcome) => {
    const profile = await readProfile(c, api)
    return answer(c, api, status, async () => <AvatarSection avatar={profile.avatar} outcome={avatarOutcome} />, { profile, avatarOutcome })
  }
  const avatarFormLimit = bodyLimit({
    maxSize: MAX_AVATAR_FORM_BYTES,
    onError: (c) => avatarAnswer(c as Ctx, 413, { message: 'The picture is larger than 256 KiB, the most an avatar may be.' }),
  })

  app.post('/me/avatar', avatarFormLimit, async (c) => {
    const incoming = await c.req.formData().catch(() => undefined)
    const file = incoming?.get('file')
    if (!(file instanceof File) || file.size === 0) return avatarAnswer(c, 422, { message: 'Choose a picture to upload.' })
    const form = new FormData()
    form.set('file', file, file.name)
    const response = await api.fetchAs(api.credentials(c), 'PUT', '/api/me/avatar', { form })
    if (response.status === 200) return avatarAnswer(c, 200, { notice: 'Your picture is saved.' })
    return avatarAnswer(c, statusOf(response.status), refusal(response, await bodyOf(response), 'Uploading your picture failed'))
  })

  app.post('/me/avatar/remove', async (c) => {
    const { error, response } = await api.as(c).DELETE('/api/me/avatar')
    if (response.status === 204) return avatarAnswer(c, 200, { notice: 'Your picture is removed.' })
    return avatarAnswer(c, statusOf(response.status), refusal(response, error, 'Removing your picture failed'))
  })

  app.post('/me/password', async (c) => {
    const form = await c.req.parseBody()
    const password = text(form, 'password')
    const section = (outcome: Outcome) => async () => <PasswordSection outcome={outcome} />
    // A typo in the new password would lock its owner out: the two must agree before the API is asked.
    if (password !== text(form, 'password_repeat')) {
      const passwordOutcome = { errors: [{ path: 'password_repeat', message: 'does not match the new password' }], message: 'Please correct the fields marked above.' }
      return answer(c, api, 422, section(passwordOutcome), { passwordOutcome })
    }
    const endApiTokens = text(form, 'end_api_tokens') === 'yes'
    const { error, response } = await api.as(c).POST('/api/me/password', { body: { current_password: text(form, 'current_password'), password, end_api_tokens: endApiTokens } })
    const ended = endApiTokens ? 'your other sessions, your personal API tokens and your connected MCP hosts' : 'your other sessions and your connected MCP hosts'
    const passwordOutcome = response.status === 204 ? { notice: `Your password is changed. Signed out: ${ended}.` } : refusal(response, error, 'Changing your password failed')
    return answer(c, api, response.status === 204 ? 200 : statusOf(response.status), section(passwordOutcome), { passwordOutcome })
  })

  app.post('/me/tokens', async (c) => {
    const form = await c.req.parseBody()
    const values = { name: text(form, 'name'), expires: text(form, 'expires_at') }
    const respond = async (status: number, tokenForm: PortalState['tokenForm']) => {
      const list = await readTokens(c, api)
      return answer(c, api, status, async () => <TokensSection tokens={list} {...tokenForm} />, { tokens: list, tokenForm })
    }
    const expiry = expiryOf(values.expires)
    if (expiry.error) return respond(422, { values, outcome: { errors: [{ path: 'expires_at', message: expiry.error }], message: 'Please correct the fields marked above.' } })
    const { data, error, response } = await api.as(c).POST('/api/v1/ApiToken', { body: { name: values.name, expires_at: expiry.value ?? null } })
    if (data) return respond(200, { created: { name: data.name, token: data.token } })
    return respond(statusOf(response.status), { values, outcome: refusal(response, error, 'Creating the token failed') })
  })

  app.post('/me/tokens/:id/revoke', async (c) => {
    const id = c.req.param('id')
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    const { error, response } = isUuid(id)
      ? await api.as(c).DELETE('/api/v1/ApiToken/{id}', { params: { path: { id } } })
      : refusedHere(404, 'No such token.')
    const list = await readTokens(c, api)
    const outcome = response.status === 204 ? { notice: 'The token is revoked.' } : refusal(response, error, 'Revoking the token failed')
    const status = response.status === 204 ? 200 : response.status === 404 ? 404 : statusOf(response.status)
    return answer(c, api, status, async () => <TokensSection tokens={list} outcome={outcome} />, { tokens: list, tokenForm: { outcome } })
  })

  mountChannelsPage(app, api)
}

/** A date from the form → the end of that day in UTC; empty is no expiry. A past day is caught here, by its field. */
function expiryOf(date: string): { value?: string; error?: string } {
  if (date === '') return {}
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T23:59:59Z`))) return { error: 'write a date as YYYY-MM-DD' }
  const value = `${date}T23:59:59Z`
  if (Date.parse(value) <= Date.now()) return { error: 'choose a day that has not passed' }
  return { value }
}
