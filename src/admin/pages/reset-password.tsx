/** @jsxImportSource hono/jsx */
import { Alert } from '../components/feedback.tsx'

/**
 * Where a reset link lands: the user chooses a new password, posted to /auth/password-reset (the endpoint scripts
 * use too). The token rides along in a hidden field.
 */
export function ResetPasswordPage({ token, error }: { token: string; error?: string }) {
  const unusable = error !== undefined || token === ''
  return (
    <section class="login card">
      <h1>Choose a password</h1>
      {unusable ? (
        <Alert text="This reset link is unknown, used or expired. Ask an admin for a new one." />
      ) : (
        <form method="post" action="/auth/password-reset">
          <input type="hidden" name="token" value={token} />
          <label for="password">
            New password (at least 8 characters)
            <input id="password" name="password" type="password" autocomplete="new-password" minlength={8} maxlength={1024} required autofocus />
          </label>
          <button type="submit">Set password</button>
        </form>
      )}
    </section>
  )
}
