import type { ColumnType, Generated, Kysely, Transaction } from 'kysely'

/** Written as a Date or ISO string, read back as a Date by both drivers. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
/** jsonb: written as an expression (see models/records.ts), read back parsed. */
type Json<T> = ColumnType<T, unknown, unknown>

interface Row {
  id: string
  version: Generated<number>
  // Timestamp already allows leaving it out on insert (the store's default applies).
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CompaniesTable extends Row {
  name: string
  slug: string
}

export interface UsersTable extends Row {
  email: string
  username: string
  display_name: Generated<string>
  avatar: string | null
  is_superadmin: Generated<boolean>
  password_hash: string | null
}

export type CompanyRole = 'owner' | 'admin' | 'member'

export interface CompanyUsersTable extends Row {
  company_id: string
  user_id: string
  role: CompanyRole
}

export interface UserPlatformsTable extends Row {
  company_id: string
  user_id: string
  platform: string
  platform_user_id: string
  platform_username: Generated<string>
}

export interface AgentConfigsTable extends Row {
  company_id: string
  name: string
  description: Generated<string>
  enabled: Generated<boolean>
  personality: Generated<string>
  runner: string
  model: Generated<string>
  timeout_seconds: Generated<number>
  channels: Json<Record<string, unknown>>
  voice: Json<Record<string, unknown>>
  email: Json<Record<string, unknown>>
  mcp_permissions: Json<Record<string, unknown>>
  plugins: Json<Record<string, unknown>>
  context_options: Json<Record<string, unknown>>
}

export interface WebchatConversationsTable extends Row {
  company_id: string
  agent_id: string | null
  title: Generated<string>
  context_prompt: Generated<string>
  created_by: string | null
}

export interface WebchatParticipantsTable extends Row {
  company_id: string
  conversation_id: string
  user_id: string
  pinned_at: Timestamp | null
}

export interface WebchatMessagesTable extends Row {
  company_id: string
  conversation_id: string
  sender_id: string | null
  agent_id: string | null
  role: 'user' | 'agent' | 'system'
  text: string
  attachments: Json<unknown[]>
  status: Generated<'complete' | 'aborted' | 'error'>
}

export interface WebchatDocumentsTable extends Row {
  company_id: string
  conversation_id: string
  uploaded_by: string | null
  filename: string
  media_type: string
  size_bytes: number
  extracted_text: Generated<string>
  truncated: Generated<boolean>
}

export interface PlansTable extends Row {
  company_id: string
  conversation_id: string
  title: string
  status: Generated<'draft' | 'active' | 'paused' | 'completed' | 'cancelled'>
}

export interface SystemConfigTable extends Row {
  key: string
  value: Json<unknown>
  description: Generated<string>
}

export interface ModelAclsTable extends Row {
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

export interface ApiTokensTable extends Row {
  user_id: string
  name: string
  token_hash: string
  prefix: string
  expires_at: Timestamp | null
  last_used_at: Timestamp | null
}

export interface RunnerModelsTable extends Row {
  runner: string
  model_id: string
  name: string
  api_id: string
  placeholder: Generated<boolean>
  curated: Generated<boolean>
  in_catalogue: Generated<boolean>
}

export type VaultScope = 'global' | 'company' | 'user' | 'agent'

export interface VaultSecretsTable extends Row {
  scope: VaultScope
  owner_id: string | null
  name: string
  nonce: string
  ciphertext: string
}

export interface McpCommandsTable extends Row {
  company_id: string | null
  name: string
  description: Generated<string>
  command: string
  args: Json<string[]>
  env: Json<Record<string, unknown>>
  variables: Json<string[]>
  network: Generated<boolean>
  enabled: Generated<boolean>
}

export interface McpServersTable extends Row {
  company_id: string
  name: string
  description: Generated<string>
  transport: 'stdio' | 'streamable-http'
  command_id: string | null
  env: Json<Record<string, unknown>>
  url: string | null
  headers: Json<Record<string, unknown>>
  vault_secrets: Json<string[]>
  enabled: Generated<boolean>
}

export interface McpPermissionsTable extends Row {
  company_id: string
  user_id: string | null
  server: string
  tool: Generated<string>
  effect: 'allow' | 'deny'
}

/** What one model call outside a chat turn cost a company (an /rlm-query): written by the kernel only. */
export interface UsageRecordsTable extends Row {
  company_id: string
  user_id: string | null
  source: string
  runner: string
  model: string
  input_tokens: Generated<number>
  output_tokens: Generated<number>
  cost_usd: Generated<number>
}

/** Where each user has signed in from: failed sign-ins there do not count against the account's hourly cap. */
export interface KnownLoginAddressesTable {
  user_id: string
  address: string
  last_success_at: Timestamp
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
  system_config: SystemConfigTable
  model_acls: ModelAclsTable
  sessions: SessionsTable
  api_tokens: ApiTokensTable
  password_resets: PasswordResetsTable
  runner_models: RunnerModelsTable
  vault_secrets: VaultSecretsTable
  mcp_commands: McpCommandsTable
  mcp_servers: McpServersTable
  mcp_permissions: McpPermissionsTable
  known_login_addresses: KnownLoginAddressesTable
  usage_records: UsageRecordsTable
}

export type TableName = keyof Database
export type Db = Kysely<Database>
/** What repository functions take first: the db or a transaction of it. */
export type Executor = Kysely<Database> | Transaction<Database>
