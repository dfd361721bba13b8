/** @jsxImportSource hono/jsx */
import type { FieldError } from '../../errors.ts'
import { Notice, Problem } from '../components/feedback.tsx'
import type { Schema } from '../api-client.ts'
import { Time } from '../components/time.tsx'

/** What a section shows after a write: the fields' own errors, a message for the rest, or a notice of success. */
export interface Outcome {
  errors?: FieldError[]
  message?: string
  notice?: string
}

/** The profile as the page shows it, with the version it was read at. */
export type Profile = Pick<Schema<'User'>, 'username' | 'display_name' | 'email'> & {
  avatar: string | null
  /** The ETag of the record as read, sent back as If-Match so an edit never overwrites a newer one unseen. */
  etag: string
}

export type Token = Schema<'ApiToken'>

export const ACCEPTED_PICTURES = 'image/png,image/jpeg,image/gif,image/webp'

const mine = (errors: FieldError[] | undefined, name: string) => (errors ?? []).filter((e) => e.path === name || e.path.startsWith(`${name}.`))

/** The errors that belong to no field of the form shown, so they are not lost. */
const unplaced = (errors: FieldError[] | undefined, fields: string[]) => (errors ?? []).filter((e) => !fields.some((f) => mine([e], f).length > 0))

function Field(props: { id: string; name: string; label: string; value?: string; type?: string; errors?: FieldError[]; required?: boolean; autocomplete?: string }) {
  const errors = mine(props.errors, props.name)
  const errorId = `${props.id}-error`
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.type === 'password' ? undefined : props.value}
        required={props.required}
        autocomplete={props.autocomplete}
        aria-invalid={errors.length > 0 ? 'true' : undefined}
        aria-describedby={errors.length > 0 ? errorId : undefined}
      />
      {errors.length > 0 ? (
        <span class="field-error" id={errorId}>
          {errors.map((e) => e.message).join('; ')}
        </span>
      ) : null}
    </div>
  )
}

/** htmx posts a section's form and swaps the section for the answer; without scripts the form posts as usual. */
export const swapInto = (id: string, action: string) => ({ method: 'post' as const, action, 'hx-post': action, 'hx-target': `#${id}`, 'hx-swap': 'outerHTML' })

export function ProfileSection({ profile, outcome = {} }: { profile: Profile; outcome?: Outcome }) {
  const fields = ['display_name']
  return (
    <section id="profile" class="card" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <p>
        Signed in as <strong>{profile.username}</strong>.
      </p>
      <form {...swapInto('profile', '/me/profile')}>
        <input type="hidden" name="etag" value={profile.etag} />
        <Field id="profile-display-name" name="display_name" label="Display name" value={profile.display_name} errors={outcome.errors} autocomplete="name" />
        <button type="submit">Save profile</button>
      </form>
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} errors={unplaced(outcome.errors, fields).map((e) => ({ ...e, path: '(body)' }))} />
    </section>
  )
}

/** The account's address, and a form to ask for another: it changes only once the link mailed to it is opened. */
export function EmailSection({ email, outcome = {} }: { email: string; outcome?: Outcome }) {
  return (
    <section id="email" class="card" aria-labelledby="email-title">
      <h2 id="email-title">Email address</h2>
      <p>
        Your address is <strong>{email}</strong>. Mail from it to an agent is answered as you.
      </p>
      <form {...swapInto('email', '/me/email')}>
        <Field id="email-new" name="email" label="New address" type="email" errors={outcome.errors} required autocomplete="email" />
        <button type="submit">Send a confirmation link</button>
      </form>
      <p>Your address changes once you open the link mailed to the new address, signed in as yourself.</p>
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} errors={unplaced(outcome.errors, ['email']).map((e) => ({ ...e, path: '(body)' }))} />
    </section>
  )
}

export function AvatarSection({ avatar, outcome = {} }: { avatar: string | null; outcome?: Outcome }) {
  return (
    <section id="avatar" class="card" aria-labelledby="avatar-title">
      <h2 id="avatar-title">Picture</h2>
      {avatar ? <img class="portal-avatar" src={avatar} alt="Your avatar" width={96} height={96} /> : <p>You have no picture yet.</p>}
      <form {...swapInto('avatar', '/me/avatar')} enctype="multipart/form-data" hx-encoding="multipart/form-data">
        <label for="avatar-file">Picture file (PNG, JPEG, GIF or WebP; at most 256 KiB and 4096×4096 pixels)</label>
        <input id="avatar-file" name="file" type="file" accept={ACCEPTED_PICTURES} required />
        <button type="submit">Upload picture</button>
      </form>
      {avatar ? (
        <form {...swapInto('avatar', '/me/avatar/remove')} class="inline-form">
          <button type="submit">Remove picture</button>
        </form>
      ) : null}
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} />
    </section>
  )
}

export function PasswordSection({ outcome = {} }: { outcome?: Outcome }) {
  const fields = ['current_password', 'password', 'password_repeat']
  return (
    <section id="password" class="card" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form {...swapInto('password', '/me/password')}>
        <fieldset>
          <legend>Change your password</legend>
          <Field id="password-current" name="current_password" label="Current password" type="password" errors={outcome.errors} required autocomplete="current-password" />
          <Field id="password-new" name="password" label="New password (at least 8 characters)" type="password" errors={outcome.errors} required autocomplete="new-password" />
          <Field id="password-repeat" name="password_repeat" label="New password again" type="password" errors={outcome.errors} required autocomplete="new-password" />
          <p>
            <input type="checkbox" id="password-end-tokens" name="end_api_tokens" value="yes" checked />{' '}
            <label for="password-end-tokens">Also revoke my personal API tokens (scripts using them stop working)</label>
          </p>
        </fieldset>
        <button type="submit">Change password</button>
      </form>
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} errors={unplaced(outcome.errors, fields).map((e) => ({ ...e, path: '(body)' }))} />
    </section>
  )
}


/** A token made just now: shown this once, because only its hash is kept. */
export interface CreatedToken {
  name: string
  token: string
}

export function TokensSection(props: { tokens: Token[]; created?: CreatedToken; values?: { name?: string; expires?: string }; outcome?: Outcome }) {
  const { tokens, created, values = {}, outcome = {} } = props
  return (
    <section id="tokens" class="card portal-wide" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Personal API tokens</h2>
      <p>A token lets a script call the API as you (Authorization: Bearer …). Revoke the ones you no longer use.</p>
      {created ? (
        <div class="notice" role="status">
          <p>
            Token <strong>{created.name}</strong> is made. Copy it now: it is shown only this once and cannot be read again.
          </p>
          <label for="created-token">Your new token</label>
          <input id="created-token" class="portal-token" type="text" readonly value={created.token} />
        </div>
      ) : null}
      {tokens.length === 0 ? (
        <p>You have no tokens.</p>
      ) : (
        <table>
          <caption>Your tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="portal-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => (
              <tr id={`token-${token.id}`}>
                <td>{token.name}</td>
                <td>
                  <code>{token.prefix}…</code>
                </td>
                <td>
                  <Time iso={token.created_at} />
                </td>
                <td>
                  <Time iso={token.last_used_at} never="never" />
                </td>
                <td>
                  <Time iso={token.expires_at} never="never" />
                </td>
                <td class="actions">
                  <form {...swapInto('tokens', `/me/tokens/${token.id}/revoke`)} hx-confirm={`Revoke the token ${token.name}? Scripts using it stop working.`}>
                    <button type="submit" aria-label={`Revoke ${token.name}`}>
                      Revoke
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form {...swapInto('tokens', '/me/tokens')}>
        <fieldset>
          <legend>New token</legend>
          <Field id="token-name" name="name" label="Name" value={values.name ?? ''} errors={outcome.errors} required />
          <Field id="token-expires" name="expires_at" label="Expires on (optional; never if empty)" type="date" value={values.expires ?? ''} errors={outcome.errors} />
        </fieldset>
        <button type="submit">Create token</button>
      </form>
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} errors={unplaced(outcome.errors, ['name', 'expires_at']).map((e) => ({ ...e, path: '(body)' }))} />
    </section>
  )
}

export interface PortalState {
  profile: Profile
  tokens: Token[]
  profileOutcome?: Outcome
  emailOutcome?: Outcome
  avatarOutcome?: Outcome
  passwordOutcome?: Outcome
  tokenForm?: { created?: CreatedToken; values?: { name?: string; expires?: string }; outcome?: Outcome }
}

/** The whole page: each section is also the fragment its own form's answer replaces. */
export function PortalPage({ state }: { state: PortalState }) {
  return (
    <div class="portal">
      <h1>Your account</h1>
      <ProfileSection profile={state.profile} outcome={state.profileOutcome} />
      <EmailSection email={state.profile.email} outcome={state.emailOutcome} />
      <AvatarSection avatar={state.profile.avatar} outcome={state.avatarOutcome} />
      <PasswordSection outcome={state.passwordOutcome} />
      <TokensSection tokens={state.tokens} {...state.tokenForm} />
      <section id="artifacts" class="card" aria-labelledby="artifacts-title">
        <h2 id="artifacts-title">My artifacts</h2>
        <p>
          What your agents made for you (pages, documents, tables, pictures), with their share links: <a href="/me/artifacts">manage them</a>.
        </p>
      </section>
      <section id="connections" class="card" aria-labelledby="connections-title">
        <h2 id="connections-title">My connections</h2>
        <p>
          Your own accounts on MCP servers that ask you to sign in, and the MCP hosts you allowed to act as you: <a href="/me/connections">manage them</a>.
        </p>
      </section>
      <section id="chat-accounts" class="card" aria-labelledby="chat-accounts-title">
        <h2 id="chat-accounts-title">My chat accounts</h2>
        <p>
          Your Telegram, Slack, WhatsApp and email accounts that talk to the agents as you: <a href="/me/channels">link or unlink them</a>.
        </p>
      </section>
    </div>
  )
}
