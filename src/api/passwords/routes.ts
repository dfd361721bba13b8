import { createRoute, z } from '@hono/zod-openapi'
import { IdParam } from '../params.ts'
import { commonErrors, notFoundError, ProblemSchema, signedIn, validationErrors } from '../responses.ts'

const password = z.string().min(8).max(1024)

export const PasswordChange = z
  .strictObject({
    current_password: z.string().min(1).max(1024).openapi({ description: 'The password in use now.' }),
    password: password.openapi({ description: 'The new password (at least 8 characters).', example: 'a much longer passphrase' }),
    end_api_tokens: z.boolean().default(true).openapi({
      description: 'Also revoke your personal API tokens (whoever knew the old password may have made some). false keeps your scripts working.',
    }),
  })
  .openapi('PasswordChange')

export const changePasswordRoute = createRoute({
  method: 'post',
  path: '/api/me/password',
  operationId: 'changeMyPassword',
  summary: 'Change your own password',
  description:
    'Needs the current password. Every other session of yours ends (the one making the change, if it is a session, ' +
    'goes on), so do the grants of MCP hosts (OAuth) and, unless `end_api_tokens` is false, your personal API tokens. ' +
    'Wrong current passwords are throttled like sign-ins.',
  tags: ['Auth'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: PasswordChange } } } },
  responses: { 204: { description: 'Changed.' }, ...commonErrors, ...validationErrors },
})

const ResetMailed = z
  .object({
    sent_to: z.string().openapi({ description: 'The address the link went to, masked.', example: 'a…@example.com' }),
    expires_at: z.iso.datetime(),
  })
  .openapi('PasswordResetMailed')

const PasswordReset = z
  .object({
    url: z.url().openapi({ description: 'The page where the user chooses a new password; hand it over privately.' }),
    token: z.string().openapi({ description: 'The one-time token inside the link, for scripts.' }),
    expires_at: z.iso.datetime(),
  })
  .openapi('PasswordReset')

export const issueResetRoute = createRoute({
  method: 'post',
  path: '/api/users/{id}/password-reset',
  operationId: 'issuePasswordReset',
  summary: 'Force a password reset: the user gets a one-time link by email',
  description:
    'For admins, who never set or learn another user’s password. The user’s password stops working, their ' +
    'sessions, personal API tokens and OAuth grants end, and a link to choose a new password is mailed to their ' +
    'account address (it works once, for 24 hours; a newer link replaces it), saying who asked. Only for users of ' +
    'your company alone, whose role is not above yours. Without a mail server (SWITCHBOARD_SMTP_URL) or an address ' +
    'for the user it is a 409 and nothing changes; a superadmin, who operates the platform, then gets the link ' +
    'in the answer instead (201) to hand over.',
  tags: ['Auth'],
  security: signedIn,
  request: { params: IdParam },
  responses: {
    201: { description: 'No mail server: the link, shown this once, to a superadmin.', content: { 'application/json': { schema: PasswordReset } } },
    202: { description: 'The link is mailed to the user.', content: { 'application/json': { schema: ResetMailed } } },
    ...commonErrors,
    ...notFoundError,
    409: { description: 'The user cannot be mailed: no mail server, or no address. Nothing changed.', content: { 'application/problem+json': { schema: ProblemSchema } } },
    503: { description: 'The mail server refused or did not answer. Nothing changed.', content: { 'application/problem+json': { schema: ProblemSchema } } },
  },
})

const ForgotForm = z
  .object({ login: z.string().trim().min(1).max(320).openapi({ description: 'The username or the email address of the account.' }) })
  .openapi('ForgotPasswordForm')

export const forgotRoute = createRoute({
  method: 'post',
  path: '/auth/forgot-password',
  security: [],
  operationId: 'forgotPassword',
  summary: 'Ask for a reset link by email, for an account whose password was forgotten',
  description:
    'Answers the same whether or not an account matches, so that nobody learns who has one. When one does, has an email ' +
    'address and the platform can send mail, a link to choose a new password goes to that address (it works once, for ' +
    '24 hours). The current password keeps working until the link is used: asking cannot lock anyone out. Limited per ' +
    'address and per account. A form post answers 303 to the sign-in page; JSON clients get 202.',
  tags: ['Auth'],
  request: {
    body: {
      required: false,
      content: { 'application/x-www-form-urlencoded': { schema: ForgotForm }, 'application/json': { schema: ForgotForm } },
    },
  },
  responses: {
    202: { description: 'Taken (JSON clients); a link is mailed if an account matches.', content: { 'application/json': { schema: z.object({ detail: z.string() }) } } },
    303: { description: 'Taken, back to the sign-in page (form posts).' },
    ...commonErrors,
    ...validationErrors,
  },
})

const ResetForm = z
  .object({
    token: z.string().min(1).max(200),
    password: password.openapi({ description: 'The new password (at least 8 characters).' }),
  })
  .openapi('PasswordResetForm')

export const useResetRoute = createRoute({
  method: 'post',
  path: '/auth/password-reset',
  security: [],
  operationId: 'resetPassword',
  summary: 'Choose a new password with a reset link’s token',
  description: 'Ends every session of the user. A form post answers 303 to the sign-in page; JSON clients get 204.',
  tags: ['Auth'],
  request: {
    body: {
      required: false,
      content: { 'application/x-www-form-urlencoded': { schema: ResetForm }, 'application/json': { schema: ResetForm } },
    },
  },
  responses: {
    204: { description: 'The password is set (JSON clients).' },
    303: { description: 'The password is set, or back to the form with the reason (form posts).' },
    ...commonErrors,
    ...validationErrors,
  },
})
