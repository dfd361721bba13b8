import { createRoute, z } from '@hono/zod-openapi'
import { describeBytes } from '../../documents/sizes.ts'
import { IdParam } from '../params.ts'
import { ProblemSchema, commonErrors, notFoundError, signedIn } from '../responses.ts'
import { AVATAR_MEDIA_TYPES, MAX_AVATAR_SIDE } from './image.ts'
import { agentFirst } from './owners.ts'
import { avatarUploadGuards } from './upload.ts'

export const AVATAR_PATH = '/api/me/avatar'
/** The most an avatar file may weigh; the whole multipart body may be a little more (see upload.ts). */
export const MAX_AVATAR_BYTES = 256 * 1024

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })
const ACCEPTED = 'PNG, JPEG, GIF or WebP'

export const AvatarUpload = z
  .object({
    file: z
      .instanceof(File, { message: 'attach the picture as a file part named "file"' })
      .openapi({ type: 'string', format: 'binary', description: `The picture: ${ACCEPTED}, judged by its content, not its name.` }),
  })
  .openapi('AvatarUpload')

const Avatar = z
  .object({
    avatar: z.string().openapi({
      description: 'Where the picture is served from now, also set as your User record’s avatar. A new upload gets a new address.',
      example: '/static/avatars/9b2f4c1e-8d3a-4f6b-a1c2-3e4d5f6a7b8c.png',
    }),
  })
  .openapi('Avatar')

/** How an upload of a picture, a person's or an agent's, is refused for what it is. */
const pictureRefusals = {
  413: problem(`The file is larger than ${describeBytes(MAX_AVATAR_BYTES)}.`),
  415: problem(`The file is not ${ACCEPTED} by its content, or the body is not multipart/form-data.`),
  422: problem(`The file part is missing, empty, or the picture is larger than ${MAX_AVATAR_SIDE}×${MAX_AVATAR_SIDE} or its header cannot be read.`),
}
const pictureBody = { required: true, content: { 'multipart/form-data': { schema: AvatarUpload } } }

export const putAvatarRoute = createRoute({
  method: 'put',
  path: AVATAR_PATH,
  operationId: 'putMyAvatar',
  summary: 'Upload your picture',
  description:
    `Accepts ${AVATAR_MEDIA_TYPES.join(', ')} up to ${describeBytes(MAX_AVATAR_BYTES)} and ${MAX_AVATAR_SIDE}×${MAX_AVATAR_SIDE} pixels, ` +
    'judged by the bytes (an SVG, an HTML page or a script named .png is refused). The picture replaces your previous ' +
    'one, which is deleted, and is served at the returned address to anyone who has it.',
  tags: ['Auth'],
  security: signedIn,
  middleware: avatarUploadGuards(MAX_AVATAR_BYTES),
  request: { body: pictureBody },
  responses: {
    200: { description: 'Stored; your avatar is this picture now.', content: { 'application/json': { schema: Avatar } } },
    ...commonErrors,
    ...pictureRefusals,
  },
})

export const deleteAvatarRoute = createRoute({
  method: 'delete',
  path: AVATAR_PATH,
  operationId: 'deleteMyAvatar',
  summary: 'Remove your picture',
  description: 'Deletes the stored picture and clears your User record’s avatar (an http(s) address set there too).',
  tags: ['Auth'],
  security: signedIn,
  responses: { 204: { description: 'You have no avatar now.' }, ...commonErrors },
})

export const AGENT_AVATAR_PATH = '/api/agents/{id}/avatar'

export const putAgentAvatarRoute = createRoute({
  method: 'put',
  path: AGENT_AVATAR_PATH,
  operationId: 'putAgentAvatar',
  summary: 'Upload an agent’s picture',
  description:
    `The picture the web chat shows for the agent. The same rules as your own: ${AVATAR_MEDIA_TYPES.join(', ')} up to ${describeBytes(MAX_AVATAR_BYTES)} and ` +
    `${MAX_AVATAR_SIDE}×${MAX_AVATAR_SIDE} pixels, judged by the bytes. Whoever may edit the agent (company admins).`,
  tags: ['Agents'],
  security: signedIn,
  middleware: [agentFirst, ...avatarUploadGuards(MAX_AVATAR_BYTES)],
  request: { params: IdParam, body: pictureBody },
  responses: {
    200: { description: 'Stored; the agent’s `avatar` is this picture now.', content: { 'application/json': { schema: Avatar } } },
    ...commonErrors,
    ...notFoundError,
    ...pictureRefusals,
  },
})

export const deleteAgentAvatarRoute = createRoute({
  method: 'delete',
  path: AGENT_AVATAR_PATH,
  operationId: 'deleteAgentAvatar',
  summary: 'Remove an agent’s picture',
  description: 'Deletes the stored picture and clears the agent’s `avatar`. Whoever may edit the agent.',
  tags: ['Agents'],
  security: signedIn,
  request: { params: IdParam },
  responses: { 204: { description: 'The agent has no picture now.' }, ...commonErrors, ...notFoundError },
})

const binary = { schema: { type: 'string' as const, format: 'binary' } }

export const avatarFileRoute = createRoute({
  method: 'get',
  path: '/static/avatars/{file}',
  security: [],
  operationId: 'getAvatarFile',
  summary: 'An uploaded avatar',
  description:
    'The picture as it was uploaded, with its type, sandboxed and never sniffed. No sign-in: the address is random and ' +
    'changes with every upload, so it is cached for a year. Answers on the console’s port too.',
  tags: ['Auth'],
  request: {
    params: z.object({
      file: z.string().openapi({ description: 'The name from an avatar address: <id>.<png|jpg|gif|webp>.', example: '9b2f4c1e-8d3a-4f6b-a1c2-3e4d5f6a7b8c.png' }),
    }),
  },
  responses: {
    200: {
      description: 'The picture.',
      content: Object.fromEntries(AVATAR_MEDIA_TYPES.map((type) => [type, binary])),
    },
    404: problem('No avatar has this name.'),
  },
})
