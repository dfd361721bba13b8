import { rowsOf } from './typed-call.ts'
import { jsonb } from '../../src/db/jsonb.ts'
import { MODELS } from '../../src/models/registry.ts'
import type { Principal, TestPlatform } from './platform.ts'
import type { CallBody } from './typed-call.ts'

export interface ModelCase {
  /** A valid body for a new record, made with whatever records it refers to, as `as`. */
  make(as: Principal): Promise<Record<string, unknown>>
  /** A body that replaces the record made from `input` (PUT); by default another made one. */
  replacement?(input: Record<string, unknown>): Promise<Record<string, unknown>>
  /** A merge patch, and what the record shows after it. */
  patch: Record<string, unknown>
  after: Record<string, unknown>
  /** Makes a record where the generic create does not (a document is uploaded), as `as`; the API's answer. */
  create?(as: Principal): Promise<Record<string, any>>
  /** Who may change the record made from `input` (patch and replace); the principal that made it by default. */
  changedBy?(input: Record<string, unknown>): Principal
}

let serial = 0
export const unique = () => `${Date.now().toString(36)}${(serial++).toString(36)}`

/** One valid way to make and change a record of every model, for suites that sweep all of them. */
export function modelCases(p: TestPlatform): Record<string, ModelCase> {
  async function create<const Model extends string>(model: Model, json: Record<string, unknown>, as: Principal): Promise<CallBody<'POST', `/api/v1/${Model}`>> {
    const reply = await p.call('POST', `/api/v1/${model}`, { json, as })
    if (reply.status !== 201) throw new Error(`creating ${model}: ${reply.status} ${JSON.stringify(reply.body)}`)
    return reply.body
  }
  const agent = async (as: Principal) => (await create('AgentConfigRecord', { name: `agent-${unique()}` }, as)).id
  const conversation = async (as: Principal) => (await create('WebchatConversation', { title: 'c', agent_id: await agent(as) }, as)).id
  const plan = async (as: Principal) => {
    const reply = await p.call('POST', '/api/plans', { as, json: { conversation_id: await conversation(as), title: 'Write it', tasks: [{ title: 'Step' }] } })
    if (reply.status !== 201) throw new Error(`making a plan: ${reply.status} ${JSON.stringify(reply.body)}`)
    return (await p.call('GET', `/api/v1/Plan/${reply.body.id}`, { as })).body
  }
  const members = new Map<string, Principal>()
  const member = async (as: Principal) => {
    const made = await p.createUser({ companyId: as.companyId })
    members.set(made.userId, made)
    return made.userId
  }
  // Programs are the platform's: the superadmin adds them, whoever makes the server.
  const program = async () =>
    (await create('McpCommand', { name: `program-${unique()}`, command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], variables: ['TOKEN', 'DEBUG'] }, p.root)).id
  let aclPairs = 0

  return {
    AgentConfigRecord: {
      make: async () => ({ name: `agent-${unique()}`, personality: 'Kind.', email: { account: 'help@example.com', sender_name: 'Help' } }),
      patch: { email: { signature: 'Regards' }, context_options: { session_ttl_minutes: 30 } },
      after: { personality: 'Kind.', email: { account: 'help@example.com', sender_name: 'Help', signature: 'Regards' }, context_options: { session_ttl_minutes: 30, service_account: null } },
    },
    User: {
      make: async () => ({ email: `${unique()}@example.com`, username: `u${unique()}`, display_name: 'Ada' }),
      patch: { display_name: 'Ada L.', avatar: '/static/avatars/ada.png' },
      after: { display_name: 'Ada L.', avatar: '/static/avatars/ada.png' },
    },
    UserPlatform: {
      make: async (as) => ({ user_id: await member(as), platform: 'slack', platform_user_id: `U${unique()}` }),
      patch: { platform_username: 'ada' },
      after: { platform: 'slack', platform_username: 'ada' },
    },
    Company: {
      make: async () => ({ name: 'Acme', slug: `acme-${unique()}` }),
      patch: { name: 'Acme Ltd' },
      after: { name: 'Acme Ltd' },
    },
    CompanyUser: {
      // A user of no company yet, whom only a superadmin can see and add.
      make: async () => ({ user_id: (await p.createUser({ companyId: null })).userId, role: 'member' }),
      // A membership stays with its user: a replacement changes the role only.
      replacement: async (input) => ({ user_id: input.user_id, role: 'admin' }),
      patch: { role: 'admin' },
      after: { role: 'admin' },
    },
    WebchatConversation: {
      make: async (as) => ({ title: 'Report', agent_id: await agent(as), context_prompt: 'EUR' }),
      patch: { title: 'Q3 report', context_prompt: null },
      after: { title: 'Q3 report', context_prompt: '', has_plan: false },
    },
    WebchatParticipant: {
      make: async (as) => ({ conversation_id: await conversation(as), user_id: await member(as) }),
      patch: { pinned_at: '2026-11-21T10:00:00.000Z', last_read_at: '2026-11-21T10:05:00.000Z' },
      after: { pinned_at: '2026-11-21T10:00:00.000Z', last_read_at: '2026-11-21T10:05:00.000Z' },
      // A pin and a read marker are their owner's alone to set.
      replacement: async (input) => ({ ...input, pinned_at: null }),
      changedBy: (input) => members.get(String(input.user_id))!,
    },
    WebchatMessage: {
      make: async (as) => ({ conversation_id: await conversation(as), text: 'Hello' }),
      patch: { text: 'Hello, edited' },
      after: { text: 'Hello, edited', role: 'user', status: 'complete' },
    },
    WebchatDocument: {
      // A replace's body: the filename is all a client writes. Records are uploaded.
      make: async () => ({ filename: `notes-${unique()}.txt` }),
      create: async (as) => {
        const form = new FormData()
        form.set('conversation_id', await conversation(as))
        form.set('file', new File(['Meeting notes: ship on Friday.'], 'notes.txt', { type: 'text/plain' }))
        const reply = await p.call('POST', '/api/chat/documents', { body: form, as })
        if (reply.status !== 201) throw new Error(`uploading a document: ${reply.status} ${JSON.stringify(reply.body)}`)
        return reply.body
      },
      patch: { filename: 'renamed.txt' },
      after: { filename: 'renamed.txt', media_type: 'text/plain', extracted_text: 'Meeting notes: ship on Friday.', truncated: false },
    },
    Plan: {
      // Plans are made with their tasks through POST /api/plans; the generic API edits their words.
      make: async () => ({ title: 'Write it', description: 'All of it.' }),
      create: async (as) => await plan(as),
      patch: { title: 'Rewrite it' },
      after: { title: 'Rewrite it', status: 'draft', continuations: 0 },
    },
    PlanTask: {
      make: async () => ({ title: 'Step', description: 'First.' }),
      create: async (as) => {
        const made = await plan(as)
        const reply = await p.call('GET', `/api/v1/PlanTask?plan_id=eq.${made.id}`, { as })
        return reply.body.data[0]!
      },
      patch: { description: 'First of all.' },
      after: { description: 'First of all.', status: 'pending', plan_status: 'draft' },
    },
    SystemConfig: {
      make: async () => ({ key: `k${unique()}`, value: { enabled: true, depth: 2 } }),
      patch: { value: { depth: 3 } },
      after: { value: { enabled: true, depth: 3 } },
    },
    ApiToken: {
      make: async () => ({ name: `script ${unique()}`, expires_at: '2030-01-01T00:00:00.000Z' }),
      patch: { name: 'renamed', expires_at: null },
      after: { name: 'renamed', expires_at: null, last_used_at: null },
    },
    McpCommand: {
      make: async () => ({ name: `program-${unique()}`, command: 'npx', args: ['@modelcontextprotocol/server-everything'], variables: ['TOKEN', 'DEBUG'] }),
      patch: { description: 'Everything, for tests', network: true },
      after: { description: 'Everything, for tests', network: true, variables: ['TOKEN', 'DEBUG'] },
    },
    McpServer: {
      make: async () => ({ name: `server-${unique()}`, transport: 'stdio', command_id: await program(), env: { TOKEN: { secret: 'everything/token' } } }),
      patch: { env: { DEBUG: { value: '1' } }, description: 'Everything, for tests' },
      // An inline value reads back only as set.
      after: { env: { TOKEN: { secret: 'everything/token' }, DEBUG: { set: true } }, description: 'Everything, for tests' },
    },
    McpPermission: {
      make: async (as) => ({ user_id: await member(as), server: 'everything', tool: `tool-${unique()}`, effect: 'allow' }),
      patch: { effect: 'deny' },
      after: { effect: 'deny', server: 'everything' },
    },
    OAuthClient: {
      make: async () => ({ client_name: `host ${unique()}`, redirect_uris: ['http://127.0.0.1:1/callback'], token_endpoint_auth_method: 'none' }),
      patch: { client_name: 'renamed host' },
      after: { client_name: 'renamed host', kind: 'preregistered' },
    },
    OAuthGrant: {
      // Grants are what a person approves on the consent page; here one is stored as that approval would store it.
      make: async () => ({}),
      create: async (as) => {
        const client = Bun.randomUUIDv7()
        const id = Bun.randomUUIDv7()
        await p.store.db.insertInto('oauth_clients').values({ id: client, client_id: `sbc_${unique()}`, kind: 'dynamic', client_name: 'A host', client_uri: null, redirect_uris: JSON.stringify(['http://127.0.0.1:1/cb']) as never, secret_hash: null, fetched_at: null }).execute()
        await p.store.db.insertInto('oauth_grants').values({ id, client_ref: client, user_id: as.userId, company_id: as.companyId, resource: `${p.services.config.baseUrl}/mcp`, scope: 'mcp', last_used_at: null }).execute()
        const reply = await p.call('GET', `/api/v1/OAuthGrant/${id}`, { as })
        if (reply.status !== 200) throw new Error(`reading a grant: ${reply.status} ${JSON.stringify(reply.body)}`)
        return reply.body
      },
      patch: {},
      after: { scope: 'mcp', client_name: 'A host' },
    },
    BackgroundTask: {
      // Tasks are started by a tool or POST /api/tasks; here one that has ended is stored as the service would store it.
      make: async () => ({}),
      create: async (as) => {
        const id = Bun.randomUUIDv7()
        await p.store.db
          .insertInto('background_tasks')
          .values({ id, company_id: as.companyId!, user_id: as.userId, conversation_id: null, agent_id: null, tool: 'everything__echo', arguments: jsonb({ message: 'hi' }), status: 'completed', progress: null, progress_total: null, progress_message: null, result: 'Echo: hi', error: null, owner: null, heartbeat_at: null, finished_at: new Date() })
          .execute()
        const reply = await p.call('GET', `/api/v1/BackgroundTask/${id}`, { as })
        if (reply.status !== 200) throw new Error(`reading a task: ${reply.status} ${JSON.stringify(reply.body)}`)
        return reply.body
      },
      patch: {},
      after: { status: 'completed', result: 'Echo: hi', arguments: { message: 'hi' } },
    },
    Budget: {
      // One budget per person and metric: each case limits a new member.
      make: async (as) => ({ user_id: await member(as), metric: 'tokens', monthly_limit: 1000 }),
      patch: { monthly_limit: 2000 },
      after: { monthly_limit: 2000, metric: 'tokens' },
    },
    ScimToken: {
      make: async () => ({ name: 'Okta provisioning' }),
      patch: { name: 'Entra provisioning' },
      after: { name: 'Entra provisioning' },
    },
    IdentityProvider: {
      // Slugs are unique on the platform: each case takes a new one.
      make: async () => ({ slug: `idp-${crypto.randomUUID().slice(0, 8)}`, name: 'Okta', issuer: 'https://idp.example.com', client_id: 'switchboard' }),
      patch: { name: 'Okta (staff)' },
      after: { name: 'Okta (staff)', jit: true, link_by_email: false, default_role: 'member' },
    },
    AuditEvent: {
      // The platform writes the trail; an audited write (a new agent) makes one, which its maker's admins read.
      make: async () => ({}),
      create: async (as) => {
        const id = await agent(as)
        const reply = await p.call('GET', `/api/v1/AuditEvent?model=eq.AgentConfigRecord&record_id=eq.${id}`, { as })
        const [event] = rowsOf(reply.body)
        if (!event) throw new Error(`no audit event for the new agent: ${reply.status} ${JSON.stringify(reply.body)}`)
        return event
      },
      patch: {},
      after: {},
    },
    UsageRecord: {
      // The platform writes these; through the API only a superadmin can, in the company `as` belongs to.
      make: async (as) => ({ user_id: as.userId, source: 'rlm', runner: 'echo', model: 'echo-1', input_tokens: 12, output_tokens: 3, cost_usd: 0.0042 }),
      patch: { cost_usd: 0.005 },
      after: { cost_usd: 0.005, runner: 'echo', input_tokens: 12 },
    },
    Artifact: {
      // Artifacts are made by the create_artifact tool or POST /api/artifacts; the generic API renames and deletes.
      make: async () => ({ title: `figures ${unique()}` }),
      create: async (as) => {
        const reply = await p.call('POST', '/api/artifacts', { json: { title: 'Figures', kind: 'markdown', content: '# Q3\n\nUp 12 %.' }, as })
        if (reply.status !== 201) throw new Error(`making an artifact: ${reply.status} ${JSON.stringify(reply.body)}`)
        return reply.body
      },
      patch: { title: 'Renamed figures' },
      after: { title: 'Renamed figures', media_type: 'text/markdown', pinned: false, revoked_at: null },
    },
    ModelAcl: {
      // (model, verb) is unique: walk through the pairs.
      make: async () => {
        const n = aclPairs++
        const verb = ['list', 'read', 'create', 'update', 'delete'][Math.floor(n / MODELS.length) % 5]
        return { model: MODELS[n % MODELS.length]!.name, verb, min_role: 'owner' }
      },
      patch: { min_role: 'admin' },
      after: { min_role: 'admin' },
    },
  }
}
