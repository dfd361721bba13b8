import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, validationErrors } from '../responses.ts'

const LoginForm = z
  .object({
    username: z.string().min(1).max(320).openapi({ description: 'Username or email.', example: 'admin' }),
    password: z.string().min(1).max(1024).openapi({ example: 'correct horse battery staple' }),
    post_login_redirect: z.string().max(2000).optional().openapi({
      description: 'Local path to return to after signing in (deep links survive login); anything else goes to /.',
      example: '/users?q=ada',
    }),
  })
  .openapi('LoginForm')

const SignedIn = z
  .object({
    user: z.object({ id: z.uuid(), username: z.string(), email: z.string(), display_name: z.string(), is_superadmin: z.boolean() }),
    expires_at: z.iso.datetime(),
    redirect: z.string(),
  })
  .openapi('SignedIn')

const cookieHeader = {
  'Set-Cookie': { schema: { type: 'string' as const }, description: 'switchboard_session_token: HttpOnly, SameSite=Lax.' },
}

export const loginRoute = createRoute({
  method: 'post',
  path: '/auth/login',
  security: [],
  operationId: 'login',
  summary: 'Sign in and get a session cookie',
  description:
    'A form post from the sign-in page answers 303 to `post_login_redirect`; send `Accept: application/json` to get ' +
    'JSON instead (scripts then reuse the cookie). Failed attempts are throttled per account and per address.',
  tags: ['Auth'],
  request: {
    body: {
      // Not `required`: with it the validator checks the body against every listed type at once, and a form
      // never passes as JSON. The handler refuses a body of any other type.
      required: false,
      content: {
        'application/x-www-form-urlencoded': { schema: LoginForm },
        'application/json': { schema: LoginForm },
      },
    },
  },
  responses: {
    200: { description: 'Signed in (JSON clients).', headers: cookieHeader, content: { 'application/json': { schema: SignedIn } } },
    303: { description: 'Signed in, or sent back to the sign-in page with an error (form posts).', headers: cookieHeader },
    ...commonErrors,
    ...validationErrors,
  },
})

export const logoutRoute = createRoute({
  method: 'post',
  path: '/auth/logout',
  security: [],
  operationId: 'logout',
  summary: 'End the session',
  tags: ['Auth'],
  responses: {
    204: { description: 'Signed out (JSON clients).' },
    303: { description: 'Signed out; back to the sign-in page (form posts), by way of the identity provider’s end_session_endpoint when the session began there.' },
    ...commonErrors,
  },
})
