import { ADMIN_PASSWORD, type TestPlatform } from './platform.ts'

/** The console's own origin in tests, which its form posts come from. */
export const CONSOLE_ORIGIN = 'http://127.0.0.1:8080'

/** Signs in on the console's form, as a browser does, and answers the session cookie (`name=value`). */
export async function consoleCookie(p: Pick<TestPlatform, 'admin'>, username = 'admin', password = ADMIN_PASSWORD): Promise<string> {
  const login = await p.admin.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: CONSOLE_ORIGIN },
    body: new URLSearchParams({ username, password }),
  })
  const cookie = login.headers.get('set-cookie')?.split(';')[0]
  if (login.status !== 303 || !cookie?.startsWith('switchboard_session_token=')) throw new Error(`signing in to the console as ${username} failed (${login.status})`)
  return cookie
}
