/** @jsxImportSource hono/jsx */
import { Alert, Notice } from '../components/feedback.tsx'
const MESSAGES: Record<string, string> = {
  invalid: 'Unknown username or wrong password.',
  throttled: 'Too many failed attempts. Wait a minute, then try again.',
}

/** The sign-in form posts to /auth/login, the same endpoint scripts use; the deep link rides along. */
export function LoginPage({ error, redirect, notice }: { error?: string; redirect: string; notice?: string }) {
  const message = error ? (MESSAGES[error] ?? 'Please sign in again.') : undefined
  return (
    <section class="login card">
      <h1>Sign in</h1>
      <Alert text={message} />
      <Notice text={notice} />
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
