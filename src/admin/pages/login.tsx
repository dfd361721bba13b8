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
    </section>
  )
}
