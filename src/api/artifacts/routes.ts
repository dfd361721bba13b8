import { createRoute, z } from '@hono/zod-openapi'
import { ARTIFACT_KINDS, MAX_IMAGE_BYTES, MAX_TEXT_BYTES } from '../../artifacts/content.ts'
import { Artifact } from '../../models/artifact.ts'
import { describeBytes } from '../../documents/sizes.ts'
import { IdParam } from '../params.ts'
import { ProblemSchema, commonErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

export const NewArtifact = z
  .strictObject({
    title: z.string().trim().min(1).max(300).openapi({ example: 'Quarterly figures' }),
    kind: z.enum(ARTIFACT_KINDS).openapi({
      description: 'text, markdown, html (shown in a sandboxed frame), json, csv, or image (PNG, JPEG, GIF or WebP, judged by its bytes; SVG is refused).',
      example: 'markdown',
    }),
    content: z.string().min(1).openapi({
      description: `The text (at most ${describeBytes(MAX_TEXT_BYTES)} of UTF-8), or for an image its bytes in base64 (at most ${describeBytes(MAX_IMAGE_BYTES)} decoded). The API’s general body limit applies too.`,
      example: '# Q3\n\nRevenue grew 12 %.',
    }),
    ttl_days: z.int().min(1).max(365).optional().openapi({ description: 'Days until it expires unless pinned (default 30).', example: 30 }),
  })
  .openapi('ArtifactNew', { description: 'A new artifact, made for the caller.' })

const ShareRequest = z
  .strictObject({
    expires_in_days: z.int().min(1).max(365).optional().openapi({
      description: 'How long the link works. Default: until the artifact expires; for a pinned artifact 30 days. Never beyond the artifact’s own expiry.',
      example: 7,
    }),
  })
  .openapi('ArtifactShareRequest')

const ShareLink = z
  .object({
    url: z.string().openapi({
      description: 'Opens the artifact for anyone who has it, without signing in, until it expires or the artifact is revoked or deleted.',
      example: 'https://console.example.com/share/artifacts/01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e?token=1795000000.kq0…',
    }),
    expires_at: z.iso.datetime().openapi({ example: '2026-12-21T09:30:00.000Z' }),
  })
  .openapi('ArtifactShareLink')

const recordAnswer = (description: string) => ({
  description,
  headers: { ETag: { description: 'The record’s version, for If-Match on /api/v1/Artifact/{id}.', schema: { type: 'string' as const } } },
  content: { 'application/json': { schema: Artifact.record } },
})

export const createArtifactRoute = createRoute({
  method: 'post',
  path: '/api/artifacts',
  operationId: 'createArtifact',
  summary: 'Make an artifact for yourself',
  description:
    'What an agent’s create_artifact tool does, for scripts. Text kinds are stored as UTF-8 (json must parse); an image is judged by ' +
    'its bytes. It expires after ttl_days unless pinned. List, rename and delete artifacts at /api/v1/Artifact; share with /api/artifacts/{id}/share.',
  tags: ['Artifacts'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: NewArtifact } } } },
  responses: {
    201: recordAnswer('Made; Location names the record.'),
    ...commonErrors,
    ...validationErrors,
    409: problem('You keep as many artifact bytes as one person may; delete some first.'),
    413: problem('The content is over the cap of its kind, or the body over the general limit.'),
    415: problem('The image is not PNG, JPEG, GIF or WebP by its bytes, or the body is not JSON.'),
  },
})

const ACTIONS = {
  pin: 'Pin an artifact: it never expires',
  unpin: 'Unpin an artifact: it expires ttl_days from now',
  revoke: 'Revoke an artifact: every share link answers 410 until unrevoked',
  unrevoke: 'Unrevoke an artifact: its unexpired share links work again',
} as const
export type ArtifactAction = keyof typeof ACTIONS

export function actionRoute(action: ArtifactAction) {
  return createRoute({
    method: 'post',
    path: `/api/artifacts/{id}/${action}`,
    operationId: `${action}Artifact`,
    summary: ACTIONS[action],
    tags: ['Artifacts'],
    security: signedIn,
    request: { params: IdParam },
    responses: {
      200: recordAnswer('The artifact as it is now.'),
      ...commonErrors,
      ...notFoundError,
      409: problem('The artifact has expired and is about to be swept.'),
    },
  })
}

export const shareRoute = createRoute({
  method: 'post',
  path: '/api/artifacts/{id}/share',
  operationId: 'shareArtifact',
  summary: 'A share link to an artifact',
  description:
    'A link on the console’s address carrying a token signed with a key derived from the master key (HMAC-SHA256 over the id and ' +
    'the expiry). Whoever holds it sees the artifact, HTML in a sandboxed frame. Revoking the artifact stops every link at once.',
  tags: ['Artifacts'],
  security: signedIn,
  request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: ShareRequest } } } },
  responses: {
    200: { description: 'The link and when it stops working.', content: { 'application/json': { schema: ShareLink } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
    409: problem('The artifact is revoked or expired.'),
  },
})
