import { z } from '@hono/zod-openapi'
import { ARTIFACT_MEDIA_TYPES } from '../artifacts/content.ts'
import type { ArtifactMediaType } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'

export const ARTIFACTS_ARE_MADE =
  'Artifacts are made by an agent’s create_artifact tool, or with POST /api/artifacts; pin, unpin, revoke, unrevoke and share them under /api/artifacts/{id}/.'

const timestamp = z.iso.datetime({ offset: true })

/**
 * What an agent handed over to a person. Artifacts are that person's alone, whatever their role: they come out of
 * private conversations, which are not the administrators' to read either. Only the title is written here; the
 * state changes (pin, unpin, revoke, unrevoke) have their own routes, and DELETE removes the artifact for good.
 */
export const Artifact = defineModel({
  name: 'Artifact',
  table: 'artifacts',
  description:
    'A document, page, table or picture an agent made for a person, shared by signed links. It expires `ttl_days` after it ' +
    'was made (or last unpinned) unless pinned; a revoked artifact is kept but its links answer 410.',
  tenantColumn: 'company_id',
  fields: {
    title: z.string().trim().min(1).max(300),
  },
  readOnly: {
    user_id: z.uuid().openapi({ description: 'Whose it is.' }),
    conversation_id: z.uuid().nullable().openapi({ description: 'The conversation it was made in, if an agent made it.' }),
    agent_id: z.uuid().nullable().openapi({ description: 'The agent that made it, if one did.' }),
    media_type: z.enum(ARTIFACT_MEDIA_TYPES as [ArtifactMediaType, ...ArtifactMediaType[]]),
    size_bytes: z.int().min(1),
    ttl_days: z.int().min(1).max(365).openapi({ description: 'Days it lives unpinned; unpinning restarts them.' }),
    pinned: z.boolean().openapi({ description: 'A pinned artifact never expires.' }),
    expires_at: timestamp.nullable().openapi({ description: 'When it expires and is swept; null while pinned.' }),
    revoked_at: timestamp.nullable().openapi({ description: 'Set while revoked: its share links answer 410.' }),
  },
  recordRule: (eb, actor) => eb('artifacts.user_id', '=', actor.userId),
  createdElsewhere: ARTIFACTS_ARE_MADE,
  // Keeps any other caller of createRecord out too: an artifact without content is no artifact.
  async guard(_tx, _actor, change) {
    if (!change.before) throw new ApiError('method_not_allowed', ARTIFACTS_ARE_MADE)
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { title: 'Quarterly figures' },
})
