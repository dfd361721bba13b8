import { createRoute, z } from '@hono/zod-openapi'
import { IdParam } from '../params.ts'
import { commonErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const password = z.string().min(8).max(1024)

export const PasswordChange = z
  .strictObject({
    current_password: z.string().min(1).max(1024).openapi({ description: 'The password in use now.' }),
    password: password.openapi({ description: 'The new password (at least 8 characters).', example: 'a much longer passphrase' }),
  })
  .openapi('PasswordChange')

export const changePasswordRoute = createRoute({
  method: 'post',
  path: '/api/me/password',
  operationId: 'changeMyPassword',
  summary: 'Change your own password',
  description:
    'Needs the current password. Every other session of yours ends (the one making the change, if it is a session, ' +
    'goes on); personal API tokens stay. Wrong current passwords are throttled like sign-ins.',
  tags: ['Auth'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: PasswordChange } } } },
  responses: { 204: { description: 'Changed.' }, ...commonErrors, ...validationErrors },
})

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
  summary: 'Make a one-time password reset link for a user',
  description:
    'For company admins, who never set another user’s password: the link lets the user choose one. It works once, ' +
    'for 24 hours; a newer link replaces it. Only for users of your company alone, whose role is not above yours.',
  tags: ['Auth'],
  security: signedIn,
  request: { params: IdParam },
  responses: {
    201: { description: 'The link, shown this once.', content: { 'application/json': { schema: PasswordReset } } },
    ...commonErrors,
    ...notFoundError,
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
