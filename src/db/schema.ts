import type { ColumnType, Generated, Insertable, Kysely, Selectable, Transaction } from 'kysely'
import type { AgentChannels, AgentContextOptions, AgentEmail, AgentMcpPermissions, AgentPlugins, AgentVoice, Values } from './columns.ts'

/** Written as a Date or ISO string, read back as a Date by both drivers. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
/** jsonb: written as an expression (see models/records.ts), read back parsed. */
type Json<T> = ColumnType<T, unknown, unknown>

interface Stored {
  id: string
  version: Generated<number>
  // Timestamp already allows leaving it out on insert (the store's default applies).
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CompaniesTable extends Stored {
  name: string
  slug: string
  require_sso: Generated<boolean>
}

export interface UsersTable extends Stored {
  email: string
  username: string
  display_name: Generated<string>
  avatar: string | null
  is_superadmin: Generated<boolean>
  password_hash: string | null
  /** The id the company's identity system (SCIM) knows the person by. */
  external_id: Generated<string | null>
  /** Set when the identity system deactivated the person: they sign in nowhere until it is cleared. */
  deactivated_at: Generated<Date | null>
}

export type CompanyRole = 'owner' | 'admin' | 'member'

export interface CompanyUsersTable extends Stored {
  company_id: string
  user_id: string
  role: CompanyRole
}

export interface UserPlatformsTable extends Stored {
  company_id: string
  user_id: string
  platform: string
  platform_user_id: string
  platform_username: Generated<string>
}

export interface AgentConfigsTable extends Stored {
  company_id: string
  name: string
  description: Generated<string>
  enabled: Generated<boolean>
  personality: Generated<string>
  runner: string
  model: Generated<string>
  timeout_seconds: Generated<number>
  channels: Json<AgentChannels>
  voice: Json<AgentVoice>
  email: Json<AgentEmail>
  mcp_permissions: Json<AgentMcpPermissions>
  plugins: Json<AgentPlugins>
  context_options: Json<AgentContextOptions>
  avatar: string | null
  starter_prompts: Json<string[]>
}

export interface WebchatConversationsTable extends Stored {
  company_id: string
  agent_id: string | null
  title: Generated<string>
  context_prompt: Generated<string>
  created_by: string | null
}

export interface WebchatParticipantsTable extends Stored {
  company_id: string
  conversation_id: string
  user_id: string
  pinned_at: Timestamp | null
  archived_at: Timestamp | null
  /** Messages after this are unread for the participant. */
  last_read_at: Timestamp | null
}

export interface WebchatMessagesTable extends Stored {
  company_id: string
  conversation_id: string
  sender_id: string | null
  agent_id: string | null
  role: 'user' | 'agent' | 'system'
  text: string
  attachments: Json<unknown[]>
  status: Generated<'complete' | 'aborted' | 'error'>
  /** A regenerated answer: the first answer of its group. */
  version_of: Generated<string | null>
  /** Set when a regenerated answer replaced this one. */
  superseded_at: Generated<Timestamp | null>
}

export interface WebchatDocumentsTable extends Stored {
  company_id: string
  conversation_id: string
  uploaded_by: string | null
  filename: string
  media_type: string
  size_bytes: number
  extracted_text: Generated<string>
  truncated: Generated<boolean>
}

export type PlanStatus = 'draft' | 'active' | 'paused' | 'completed' | 'cancelled'
export type PlanTaskStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'skipped'

export interface PlansTable extends Stored {
  company_id: string
  conversation_id: string
  title: string
  description: Generated<string>
  status: Generated<PlanStatus>
  created_by: string | null
  driven_by: Generated<string | null>
  continuations: Generated<number>
  /** The tool approval its work waits on: the plan is paused until it is answered. */
  awaiting_approval_id: Generated<string | null>
}

export interface PlanTasksTable extends Stored {
  company_id: string
  plan_id: string
  position: number
  title: string
  description: Generated<string>
  status: Generated<PlanTaskStatus>
  note: Generated<string>
}

export interface SystemConfigTable extends Stored {
  key: string
  value: Json<unknown>
  description: Generated<string>
}

export interface ModelAclsTable extends Stored {
  model: string
  verb: 'list' | 'read' | 'create' | 'update' | 'delete'
  min_role: CompanyRole | 'superadmin'
}

export interface SessionsTable {
  id: string
  user_id: string
  token_hash: string
  created_at: Timestamp
  last_seen_at: Timestamp
  expires_at: Timestamp
  /** Where a session begun at an identity provider began, and its ID token: signing out ends it there too. */
  identity_provider_id: Generated<string | null>
  id_token: Generated<string | null>
}

export interface PasswordResetsTable {
  id: string
  user_id: string
  company_id: string | null
  token_hash: string
  created_by: string | null
  expires_at: Timestamp
  created_at: Timestamp
}

export interface ChatTurnsTable {
  conversation_id: string
  user_id: string
  lease_until: Timestamp
}

export interface EmailChangesTable {
  user_id: string
  email: string
  token_hash: string
  expires_at: Timestamp
  created_at: Generated<Timestamp>
}

export interface ApiTokensTable extends Stored {
  user_id: string
  name: string
  token_hash: string
  prefix: string
  expires_at: Timestamp | null
  last_used_at: Timestamp | null
}

export interface RunnerModelsTable extends Stored {
  runner: string
  model_id: string
  name: string
  api_id: string
  placeholder: Generated<boolean>
  curated: Generated<boolean>
  in_catalogue: Generated<boolean>
}

export type VaultScope = 'global' | 'company' | 'user' | 'agent'

export interface VaultSecretsTable extends Stored {
  scope: VaultScope
  owner_id: string | null
  name: string
  nonce: string
  ciphertext: string
}

export interface McpCommandsTable extends Stored {
  company_id: string | null
  name: string
  description: Generated<string>
  command: string
  args: Json<string[]>
  env: Json<Values>
  variables: Json<string[]>
  network: Generated<boolean>
  enabled: Generated<boolean>
}

export interface McpServersTable extends Stored {
  company_id: string
  name: string
  description: Generated<string>
  transport: 'stdio' | 'streamable-http'
  command_id: string | null
  env: Json<Values>
  url: string | null
  headers: Json<Values>
  vault_secrets: Json<string[]>
  enabled: Generated<boolean>
  oauth: Generated<boolean>
}

export interface McpPermissionsTable extends Stored {
  company_id: string
  user_id: string | null
  server: string
  tool: Generated<string>
  effect: 'allow' | 'deny' | 'approve'
  approvers: Generated<'self' | 'admins'>
  approval_timeout_seconds: Generated<number>
}

/** A button of a reply: what it says, and the text it sends back as the person's message. */
export interface ChannelChoice {
  label: string
  text: string
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled'

/** A tool call waiting for (or given) a person's yes; decided once, by the conditional update from pending. */
export interface ToolApprovalsTable {
  id: string
  company_id: string
  conversation_id: string | null
  agent_id: string | null
  user_id: string
  server: string
  tool: string
  arguments: Json<Record<string, unknown>>
  /** The rule that asked, in words (`McpPermission <id>`, `agent helpdesk`). */
  rule: string
  approvers: 'self' | 'admins'
  status: Generated<ApprovalStatus>
  decided_by: string | null
  decided_at: Date | null
  expires_at: Date
  created_at: Generated<Date>
}

/** What one model call outside a chat turn cost a company (an /rlm-query): written by the kernel only. */
export interface UsageRecordsTable extends Stored {
  company_id: string
  user_id: string | null
  source: string
  runner: string
  model: string
  input_tokens: Generated<number>
  output_tokens: Generated<number>
  cost_usd: Generated<number>
  conversation_id: Generated<string | null>
  outcome: Generated<'complete' | 'aborted' | 'error' | null>
  agent_id: Generated<string | null>
  tool_calls: Generated<number>
  /** How long the audio transcribed or spoken was. */
  audio_ms: Generated<number>
}

/** An OpenID Connect provider a company signs its people in with (sql/0035_identity_providers.sql). */
export interface IdentityProvidersTable extends Stored {
  company_id: string
  slug: string
  name: string
  issuer: string
  client_id: string
  client_secret_secret: string | null
  scopes: Generated<string>
  enabled: Generated<boolean>
  listed: Generated<boolean>
  jit: Generated<boolean>
  link_by_email: Generated<boolean>
  groups_claim: Generated<string>
  role_mapping: Json<Array<{ group: string; role: CompanyRole }>>
  default_role: 'member' | 'admin' | null
}

/** A company's bearer token for SCIM provisioning (sql/0036_scim.sql). */
export interface ScimTokensTable extends Stored {
  company_id: string
  name: string
  token_hash: string
  prefix: string
  last_used_at: Timestamp | null
  /** The role of whoever made it: what the token does reaches nobody above it. */
  made_by_role: Generated<'admin' | 'owner' | 'superadmin'>
}

/** A group as the company's identity system provisions it; its name picks a role through the role mappings. */
export interface ScimGroupsTable extends Stored {
  company_id: string
  display_name: string
  external_id: string | null
}

export interface ScimGroupMembersTable {
  group_id: string
  user_id: string
}

/** Which account a provider's subject is. */
export interface UserIdentitiesTable {
  id: string
  provider_id: string
  user_id: string
  subject: string
  created_at: Generated<Date>
}

/** A voice note heard or an answer spoken (sql/0034_voice.sql). */
export interface VoiceClipsTable {
  id: string
  company_id: string
  conversation_id: string
  /** The message it was heard as (the person's) or spoken for (the agent's); set once that message exists. */
  message_id: string | null
  direction: 'heard' | 'spoken'
  /** Which part of a long answer, from 0. */
  part: Generated<number>
  media_type: string
  bytes: Uint8Array
  duration_ms: number | null
  created_at: Generated<Date>
}

/** A reply waiting for a bridge to fetch it (sql/0028_bridge.sql). */
export interface BridgeRepliesTable {
  id: string
  agent_id: string
  network: string
  thread: string
  text: string
  created_at: Generated<Date>
}

/** One process of the platform and its last beat (sql/0027_processes.sql). */
export interface ProcessesTable {
  id: string
  host: string
  pid: number
  version: string
  started_at: Timestamp
  last_seen_at: Timestamp
  draining: Generated<boolean>
}

/** A monthly spending limit of a company (user_id null) or of one person in it (sql/0026_budgets.sql). */
export interface BudgetsTable extends Stored {
  company_id: string
  user_id: string | null
  metric: 'cost_usd' | 'tokens'
  monthly_limit: number
  lifted_until: Timestamp | null
}

/** One write an admin would ask about (sql/0025_audit_events.sql); never updated. */
export interface AuditEventsTable extends Stored {
  company_id: string | null
  actor_id: string | null
  action: string
  model: string
  record_id: string | null
  changes: Json<Record<string, unknown>>
  request_id: string | null
  address: string | null
}

/** Where each user has signed in from: failed sign-ins there do not count against the account's hourly cap. */
export interface KnownLoginAddressesTable {
  user_id: string
  address: string
  last_success_at: Timestamp
}

// Shared state of several processes (sql/0010_shared_state.sql): not models, no versions.
export interface ThrottleBucketsTable {
  key: string
  tokens: number
  at: ColumnType<number, number, number>
  allowed: boolean
  full_at: ColumnType<number, number, number>
}

export interface EventPayloadsTable {
  id: string
  type: string
  payload: Json<unknown>
  created_at: Generated<Date>
}

export interface McpSessionsTable {
  id: string
  user_id: string
  company_id: string | null
  server: string
  /** The host can be asked (MCP elicitation): a tool behind approval asks it. */
  elicitation: Generated<boolean>
  created_at: Generated<Date>
  last_seen_at: Timestamp
}

/** A picture a user uploaded for themselves (sql/0013_avatars.sql): served at /static/avatars/<id>.<ext>. */
/** A stored picture: a person's (`user_id`) or an agent's (`agent_id`), exactly one of them. */
export interface UserAvatarsTable {
  id: string
  user_id: string | null
  agent_id: string | null
  media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'
  bytes: Uint8Array
  created_at: Generated<Date>
}

export interface VaultTokensTable {
  token_hash: string
  refs: Json<unknown>
  expires_at: Timestamp
}

/** A plugin's runtime state (sql/0012_plugins.sql); no row means the default for its kind. */
export interface PluginStatesTable {
  name: string
  enabled: boolean
  settings: Json<Record<string, unknown>>
  version: Generated<number>
  updated_at: Timestamp
}

export interface OAuthClientsTable extends Stored {
  client_id: string
  kind: 'metadata_document' | 'dynamic' | 'preregistered'
  client_name: Generated<string>
  client_uri: string | null
  redirect_uris: Json<string[]>
  token_endpoint_auth_method: Generated<'none' | 'client_secret_post' | 'client_secret_basic'>
  secret_hash: string | null
  fetched_at: Timestamp | null
}

export interface OAuthGrantsTable extends Stored {
  client_ref: string
  user_id: string
  company_id: string | null
  resource: string
  scope: string
  last_used_at: Timestamp | null
}

export interface OAuthCodesTable {
  code_hash: string
  grant_id: string
  redirect_uri: string
  code_challenge: string
  expires_at: Timestamp
  used_at: Timestamp | null
}

export interface OAuthTokensTable {
  token_hash: string
  grant_id: string
  kind: 'access' | 'refresh'
  expires_at: Timestamp
  used_at: Timestamp | null
  created_at: Generated<Date>
}

export interface McpConnectionsTable {
  user_id: string
  server_id: string
  status: 'connected' | 'expired'
  changed_at: Generated<Date>
}

export type ArtifactMediaType =
  | 'text/plain'
  | 'text/markdown'
  | 'text/html'
  | 'application/json'
  | 'text/csv'
  | 'image/png'
  | 'image/jpeg'
  | 'image/gif'
  | 'image/webp'

/** What an agent handed over (sql/0017_artifacts.sql): kept until it expires, unless pinned. */
export interface ArtifactsTable extends Stored {
  company_id: string
  user_id: string
  conversation_id: string | null
  agent_id: string | null
  title: string
  media_type: ArtifactMediaType
  size_bytes: number
  content: Uint8Array
  ttl_days: Generated<number>
  pinned: Generated<boolean>
  expires_at: Timestamp | null
  revoked_at: Timestamp | null
}

export type BackgroundTaskStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted'

/** A tool run in the background (sql/0018_background_tasks.sql): written by the kernel only. */
export interface BackgroundTasksTable extends Stored {
  company_id: string
  user_id: string
  conversation_id: string | null
  agent_id: string | null
  tool: string
  arguments: Json<Record<string, unknown>>
  status: Generated<BackgroundTaskStatus>
  progress: number | null
  progress_total: number | null
  progress_message: string | null
  result: string | null
  result_truncated: Generated<boolean>
  error: string | null
  owner: string | null
  heartbeat_at: Timestamp | null
  finished_at: Timestamp | null
}

/** Where a channel's answers go, as its plugin describes it (a chat id, a channel and thread, an email to answer). */
export type ChannelTarget = Record<string, unknown>

export type ChannelQueueStatus = 'pending' | 'done' | 'failed'

interface ChannelQueued {
  id: string
  company_id: string
  agent_id: string
  platform: string
  thread_key: string
  attempts: Generated<number>
  next_attempt_at: Timestamp
  lease_until: Timestamp | null
  lease_owner: string | null
  last_error: string | null
  created_at: Timestamp
}

export interface ChannelInboxTable extends ChannelQueued {
  delivery_id: string
  message: Json<unknown>
  status: Generated<ChannelQueueStatus>
  done_at: Timestamp | null
}

export interface ChannelThreadsTable {
  id: string
  company_id: string
  agent_id: string
  platform: string
  thread_key: string
  user_id: string
  conversation_id: string
  target: Json<ChannelTarget>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ChannelOutboxTable extends ChannelQueued {
  key: string
  target: Json<ChannelTarget>
  parts: Json<string[]>
  parts_sent: Generated<number>
  /** Buttons the last part offers, where the platform has them; each sends its text back when pressed. */
  choices: Json<ChannelChoice[]> | null
  /** A voice clip to send as the platform's voice message, instead of the text parts (sql/0034_voice.sql). */
  voice_clip_id: Generated<string | null>
  status: Generated<'pending' | 'sent' | 'failed'>
  sent_at: Timestamp | null
}

export interface ChannelStatusTable {
  agent_id: string
  platform: string
  company_id: string
  last_seen_at: Timestamp | null
  last_delivery_at: Timestamp | null
  last_error: string | null
  last_error_at: Timestamp | null
}

export interface ChannelLinkCodesTable {
  code_hash: string
  company_id: string
  user_id: string
  expires_at: Timestamp
  created_at: Timestamp
}

export interface Database {
  companies: CompaniesTable
  users: UsersTable
  company_users: CompanyUsersTable
  user_platforms: UserPlatformsTable
  agent_configs: AgentConfigsTable
  webchat_conversations: WebchatConversationsTable
  webchat_participants: WebchatParticipantsTable
  webchat_messages: WebchatMessagesTable
  webchat_documents: WebchatDocumentsTable
  plans: PlansTable
  plan_tasks: PlanTasksTable
  system_config: SystemConfigTable
  model_acls: ModelAclsTable
  sessions: SessionsTable
  api_tokens: ApiTokensTable
  password_resets: PasswordResetsTable
  email_changes: EmailChangesTable
  chat_turns: ChatTurnsTable
  runner_models: RunnerModelsTable
  vault_secrets: VaultSecretsTable
  mcp_commands: McpCommandsTable
  mcp_servers: McpServersTable
  mcp_permissions: McpPermissionsTable
  tool_approvals: ToolApprovalsTable
  known_login_addresses: KnownLoginAddressesTable
  usage_records: UsageRecordsTable
  audit_events: AuditEventsTable
  budgets: BudgetsTable
  processes: ProcessesTable
  bridge_replies: BridgeRepliesTable
  throttle_buckets: ThrottleBucketsTable
  event_payloads: EventPayloadsTable
  mcp_sessions: McpSessionsTable
  vault_tokens: VaultTokensTable
  user_avatars: UserAvatarsTable
  plugin_states: PluginStatesTable
  oauth_clients: OAuthClientsTable
  oauth_grants: OAuthGrantsTable
  oauth_codes: OAuthCodesTable
  oauth_tokens: OAuthTokensTable
  mcp_connections: McpConnectionsTable
  artifacts: ArtifactsTable
  background_tasks: BackgroundTasksTable
  channel_inbox: ChannelInboxTable
  channel_threads: ChannelThreadsTable
  channel_outbox: ChannelOutboxTable
  voice_clips: VoiceClipsTable
  identity_providers: IdentityProvidersTable
  scim_tokens: ScimTokensTable
  scim_groups: ScimGroupsTable
  scim_group_members: ScimGroupMembersTable
  user_identities: UserIdentitiesTable
  channel_status: ChannelStatusTable
  channel_link_codes: ChannelLinkCodesTable
}

export type TableName = keyof Database

/** A row as read back (the JSON shapes are those the models validate on write). */
export type Row<T extends TableName> = Selectable<Database[T]>
/** A row as written: generated columns may be left out. */
export type NewRow<T extends TableName> = Insertable<Database[T]>

export type Company = Row<'companies'>
export type User = Row<'users'>
export type AgentConfig = Row<'agent_configs'>
export type NewAgentConfig = NewRow<'agent_configs'>
export type WebchatConversation = Row<'webchat_conversations'>
export type WebchatMessage = Row<'webchat_messages'>
export type NewWebchatMessage = NewRow<'webchat_messages'>
export type McpCommand = Row<'mcp_commands'>
export type McpServer = Row<'mcp_servers'>
export type McpPermission = Row<'mcp_permissions'>
export type Session = Row<'sessions'>
export type ApiToken = Row<'api_tokens'>
export type VaultSecret = Row<'vault_secrets'>
export type NewUsageRecord = NewRow<'usage_records'>
export type Db = Kysely<Database>
/** What repository functions take first: the db or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>
