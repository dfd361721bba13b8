/** @jsxImportSource hono/jsx */
import { Notice, Problem } from '../components/feedback.tsx'
import { type Outcome } from './components.tsx'

/** The page a confirmation link opens: the person confirms, signed in, with a button (never on the link's GET). */
export function ConfirmEmailPage({ token, outcome = {} }: { token: string; outcome?: Outcome }) {
  return (
    <section class="card" aria-labelledby="confirm-email-title">
      <h1 id="confirm-email-title">Confirm your address</h1>
      {token ? (
        <form method="post" action="/confirm-email">
          <input type="hidden" name="token" value={token} />
          <p>Make the address this link was mailed to the address of your account?</p>
          <button type="submit">Confirm the address</button>
        </form>
      ) : null}
      <Notice text={outcome.notice} />
      <Problem message={outcome.message} errors={[]} />
      <p>
        <a href="/me">Back to your account</a>
      </p>
    </section>
  )
}
