/** @jsxImportSource hono/jsx */
import { Alert, Notice } from '../components/feedback.tsx'
const MESSAGES: Record<string, string> = {
  invalid: 'Unknown username or wrong password.',
  throttled: 'Too many failed attempts. Wait a minute, then try again.',
  deactivated: 'This account is deactivated by its company’s identity system. Ask your admin.',
  sso_deactivated: 'This account is deactivated by its company’s identity system. Ask your admin.',
  sso_required: 'Your company signs its people in through its identity provider: use a “Sign in with …” button above.',
  sso_state: 'That sign-in was not started here, or took too long. Please start again.',
  sso_verify: 'The identity provider’s answer could not be verified, so nobody was signed in. Please start again; if it keeps happening, tell your admin.',
  sso_provider: 'The identity provider cannot be used just now (it is switched off, unreachable, or not set up completely). Tell your admin.',
  sso_denied: 'The sign-in was cancelled at the identity provider.',
  sso_exists: 'An account with this email exists already and is not linked to this identity provider. Sign in with your password, or ask an admin to allow linking.',
  sso_unverified: 'The identity provider has not verified your email address, so it cannot sign you in to the account that has it.',
  sso_unknown: 'This identity provider signs in only people the company has added (and needs an email address from it). Ask an admin to add you.',
  sso_no_role: 'You are in none of the groups this company lets sign in. Ask an admin.',
  sso_not_member: 'You are no longer a member of the company this identity provider signs in to.',
}

/** Each identity provider a company set up, as a way in beside the password. */
function ProviderButtons({ providers, redirect }: { providers: Array<{ slug: string; name: string; company: string }>; redirect: string }) {
  if (providers.length === 0) return null
  return (
    <ul class="sign-in-providers">
      {providers.map((p) => (
        <li>
          <a class="button" href={`/auth/sso/${p.slug}?${new URLSearchParams({ post_login_redirect: redirect })}`}>
            Sign in with {p.name} <span class="muted">({p.company})</span>
          </a>
        </li>
      ))}
    </ul>
  )
}

/** The sign-in form posts to /auth/login, the same endpoint scripts use; the deep link rides along. */
export function LoginPage({ error, redirect, notice, providers = [] }: { error?: string; redirect: string; notice?: string; providers?: Array<{ slug: string; name: string; company: string }> }) {
  const message = error ? (MESSAGES[error] ?? 'Please sign in again.') : undefined
  return (
    <section class="login card">
      <h1>Sign in</h1>
      <Alert text={message} />
      <Notice text={notice} />
      <ProviderButtons providers={providers} redirect={redirect} />
      <form method="post" action="/auth/login">
        <input type="hidden" name="post_login_redirect" value={redirect} />
        <label for="username">
          Username or email
          <input id="username" name="username" autocomplete="username" required autofocus />
        </label>
        <label for="password">
          Password
          <input id="password" name="password" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <p>
        <a href="/forgot-password">Forgot password?</a>
      </p>
    </section>
  )
}

/** "Forgot password?": a username or email, and a link by mail if an account matches (the answer never says). */
export function ForgotPasswordPage({ error }: { error?: string }) {
  return (
    <section class="login card">
      <h1>Forgot your password?</h1>
      <p>Give your username or email address: if an account matches and has an email address, a link to choose a new password goes there.</p>
      <Alert text={error === 'throttled' ? 'Too many requests. Wait a while, then try again.' : error ? 'Please try again.' : undefined} />
      <form method="post" action="/auth/forgot-password">
        <label for="login">
          Username or email
          <input id="login" name="login" autocomplete="username" required autofocus maxlength={320} />
        </label>
        <button type="submit">Send me a link</button>
      </form>
      <p>
        <a href="/login">Back to sign in</a>
      </p>
    </section>
  )
}
