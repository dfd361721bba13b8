import { AgentConfigRecord } from './agent-config.ts'
import { Artifact } from './artifact.ts'
import { ApiToken } from './api-token.ts'
import { Company, CompanyUser } from './company.ts'
import type { Model } from './define.ts'
import { McpCommand, McpPermission, McpServer } from './mcp.ts'
import { OAuthClient, OAuthGrant } from './oauth.ts'
import { defineModelAcl } from './model-acl.ts'
import { SystemConfig } from './system.ts'
import { User, UserPlatform } from './user.ts'
import { UsageRecord } from './usage.ts'
import { AuditEvent } from './audit-event.ts'
import { Budget } from './budget.ts'
import { IdentityProvider } from './identity-provider.ts'
import { ScimToken } from './scim-token.ts'
import { WebchatConversation, WebchatDocument, WebchatMessage, WebchatParticipant } from './webchat.ts'
import { Plan, PlanTask } from './plan.ts'
import { BackgroundTask } from './background-task.ts'

const OTHERS: readonly Model[] = [
  AgentConfigRecord,
  User,
  UserPlatform,
  Company,
  CompanyUser,
  WebchatConversation,
  WebchatParticipant,
  WebchatMessage,
  WebchatDocument,
  Plan,
  PlanTask,
  SystemConfig,
  ApiToken,
  McpCommand,
  McpServer,
  McpPermission,
  UsageRecord,
  Budget,
  IdentityProvider,
  ScimToken,
  AuditEvent,
  OAuthClient,
  OAuthGrant,
  Artifact,
  BackgroundTask,
]

/** Every persisted model, in the order the API document lists them. Later issues add theirs to OTHERS. */
export const MODELS: readonly Model[] = [...OTHERS, defineModelAcl(OTHERS)]

export type ModelRegistry = ReadonlyMap<string, Model>

export function createModelRegistry(models: readonly Model[] = MODELS): ModelRegistry {
  return new Map(models.map((model) => [model.name, model]))
}
