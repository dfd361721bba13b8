import { hasRole, type Actor } from '../auth/actor.ts'
import { audit } from '../audit/trail.ts'
import type { ChatFeed } from '../chat/feed.ts'
import type { Clock } from '../clock.ts'
import { jsonb } from '../db/jsonb.ts'
import type { ApprovalStatus, Database, Db, Executor, ToolApprovalsTable } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import type { Logger } from '../logger.ts'
import type { Plans } from '../plans/plans.ts'
import { ApiError } from '../errors.ts'
import { sql, type Selectable, type SelectQueryBuilder } from 'kysely'
import { scoped, type TenantScope } from '../db/scoped.ts'

/** Who sees a request: the company's admins all of them, anyone else those of their own turns only. */
export const TOOL_APPROVALS: TenantScope<'tool_approvals'> = {
  table: 'tool_approvals',
  tenantColumn: 'company_id',
  recordRule: (eb, actor) => (actor.isSuperadmin || actor.role === 'admin' || actor.role === 'owner' ? undefined : eb('tool_approvals.user_id', '=', actor.userId)),
}

/** One request as the API, the web chat's card and the audit trail show it. */
export interface ApprovalView {
  id: string
  conversation_id: string | null
  agent_id: string | null
  /** Whose turn it is: they may always answer. */
  user_id: string
  server: string
  tool: string
  /** As the model sent them, with what looks like a secret masked. */
  arguments: Record<string, unknown>
  rule: string
  approvers: 'self' | 'admins'
  status: ApprovalStatus
  decided_by: string | null
  /** The answerer's name as people see it. */
  decided_by_name: string | null
  decided_at: string | null
  expires_at: string
  created_at: string
}

/** What a turn asks: a tool call, whose turn it is, and what the rule that asked says. */
export interface ApprovalRequest {
  companyId: string
  conversationId: string | null
  agentId: string | null
  userId: string
  server: string
  tool: string
  arguments: Record<string, unknown>
  rule: string
  approvers: 'self' | 'admins'
  timeoutSeconds: number
}

/** How a request ended, for the turn that waits on it. */
export type ApprovalOutcome = Exclude<ApprovalStatus, 'pending'>

const SECRET_KEY = /pass(word|phrase)?|secret|token|api[-_]?key|authori[sz]ation|credential|private[-_]?key|cookie/i
const MASK = '•••• (hidden)'

/** The arguments as a person is shown them and the store keeps them: values under secret-looking keys masked. */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (depth > 20) return MASK
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, depth + 1))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, SECRET_KEY.test(key) ? MASK : maskSecrets(inner, depth + 1)]))
  }
  return value
}

type Row = Selectable<ToolApprovalsTable> & { decided_by_name?: string | null }

const viewOf = (row: Row): ApprovalView => ({
  id: row.id,
  conversation_id: row.conversation_id,
  agent_id: row.agent_id,
  user_id: row.user_id,
  server: row.server,
  tool: row.tool,
  arguments: row.arguments as Record<string, unknown>,
  rule: row.rule,
  approvers: row.approvers,
  status: row.status,
  decided_by: row.decided_by,
  decided_by_name: row.decided_by_name ?? null,
  decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
  expires_at: new Date(row.expires_at).toISOString(),
  created_at: new Date(row.created_at).toISOString(),
})

/**
 * Tool calls that wait for a person's yes. A request is a row; its answer is the one conditional update that moves
 * it from pending (a person's yes or no, its timeout, or the turn's end), so two approvers at once, on two
 * processes, leave exactly one decision. The turn waiting on it hears the answer from the bus wherever it runs,
 * and reads the row again should the bus have dropped anything.
 */
export class Approvals {
  readonly #waiting = new Map<string, (status: ApprovalOutcome) => void>()

  constructor(
    private readonly db: Db,
    private readonly events: EventBus,
    private readonly feed: ChatFeed,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** The conversations' plans, paused while their work waits on a request. */
    private readonly plans?: Pick<Plans, 'awaitApproval' | 'approvalAnswered'>,
  ) {
    events.subscribe('approval.decided', ({ approval_id, status }) => this.#waiting.get(approval_id)?.(status))
    events.onMissed(() => {
      for (const id of this.#waiting.keys()) void this.#settled(id)
    })
  }

  /**
   * Asks, and waits for the answer: a person's, the timeout's (expired), or the turn's end (cancelled, when
   * `signal` aborts). The card shows in the conversation at once, on every participant's page; `asked` asks
   * elsewhere too (an MCP host), answering through decide() like anyone.
   */
  async ask(request: ApprovalRequest, signal: AbortSignal, asked?: (approvalId: string) => void): Promise<ApprovalOutcome> {
    const now = this.clock.now()
    const id = Bun.randomUUIDv7()
    // Waiting before the request exists: an answer given the moment it can be seen is heard.
    const answered = new Promise<ApprovalOutcome>((resolve) => this.#waiting.set(id, resolve))
    const row = await this.db.transaction().execute(async (tx) => {
      const inserted = await tx
        .insertInto('tool_approvals')
        .values({
          id,
          company_id: request.companyId,
          conversation_id: request.conversationId,
          agent_id: request.agentId,
          user_id: request.userId,
          server: request.server,
          tool: request.tool,
          arguments: jsonb(maskSecrets(request.arguments) as Record<string, unknown>),
          rule: request.rule,
          approvers: request.approvers,
          expires_at: new Date(now + request.timeoutSeconds * 1000),
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      await audit(tx, undefined, {
        action: 'approval_request',
        model: 'ToolApproval',
        recordId: inserted.id,
        companyId: request.companyId,
        actorId: null,
        changes: { server: request.server, tool: request.tool, arguments: inserted.arguments, rule: request.rule, for: request.userId },
      })
      return inserted
    }).catch((error) => {
      this.#waiting.delete(id)
      throw error
    })
    await this.#show(viewOf(row))
    const conversationId = request.conversationId
    if (conversationId) await this.#aside('pausing the plan of a tool approval', () => this.plans?.awaitApproval(conversationId, row.id))
    // Where the person is, beside the card: the MCP host they called from.
    asked?.(row.id)
    const timer = setTimeout(() => void this.#close(row.id, 'expired'), request.timeoutSeconds * 1000)
    const onAbort = () => void this.#close(row.id, 'cancelled')
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    let outcome: ApprovalOutcome = 'cancelled'
    try {
      outcome = await answered
      return outcome
    } finally {
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      this.#waiting.delete(row.id)
      // A stopped turn leaves its plan where it was, for the person to carry on: no continuation follows it.
      if (conversationId) await this.#aside('resuming the plan of a tool approval', () => this.plans?.approvalAnswered(row.id, { goOn: outcome !== 'cancelled' }))
    }
  }

  /** A plan's pause and resumption inform its readers: failing them fails no tool call. */
  async #aside(what: string, step: () => Promise<void> | undefined): Promise<void> {
    try {
      await step()
    } catch (error) {
      this.log.error(`${what} failed`, { error: String(error) })
    }
  }

  /** A person's answer. Only the person whose turn it is, or (where the rule says so) the company's admins. */
  async decide(actor: Actor, id: string, approve: boolean): Promise<ApprovalView> {
    const row = await this.#visible(actor, id)
    if (!row) throw new ApiError('not_found', `No tool approval with id ${id}.`)
    const mayAnswer = row.user_id === actor.userId || (row.approvers === 'admins' && hasRole(actor, 'admin'))
    if (!mayAnswer) {
      throw new ApiError('forbidden', row.approvers === 'admins' ? 'Only the person whose turn it is, or an admin of the company, may answer this request.' : 'Only the person whose turn it is may answer this request.')
    }
    const decided = await this.db.transaction().execute(async (tx) => {
      const updated = await tx
        .updateTable('tool_approvals')
        .set({ status: approve ? 'approved' : 'denied', decided_by: actor.userId, decided_at: new Date(this.clock.now()) })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        // Past its time it is a no, even where the process that waited on it is gone and never closed it.
        .where('expires_at', '>', new Date(this.clock.now()))
        .returningAll()
        .executeTakeFirst()
      if (updated) await this.#auditDecision(tx, actor, updated)
      return updated
    })
    if (!decided) {
      if (row.status === 'pending') await this.#close(id, 'expired')
      const now = (await this.#visible(actor, id))!
      const by = now.decided_by_name ? ` by ${now.decided_by_name}` : ''
      throw new ApiError('conflict', `This request was already answered: ${now.status}${by}${now.decided_at ? ` at ${new Date(now.decided_at).toISOString()}` : ''}.`)
    }
    const name = await this.db.selectFrom('users').select(sql<string>`coalesce(nullif(display_name, ''), username)`.as('name')).where('id', '=', actor.userId).executeTakeFirst()
    const view = viewOf({ ...decided, decided_by_name: name?.name ?? null })
    await this.#announce(view)
    return view
  }

  /** The requests the actor may see: their own, and their company's when they are an admin of it. */
  async list(actor: Actor, filters: { status?: ApprovalStatus; conversationId?: string; limit: number }): Promise<ApprovalView[]> {
    let query = this.#named(scoped(this.db, actor).selectFrom(TOOL_APPROVALS))
    if (filters.status) query = query.where('tool_approvals.status', '=', filters.status)
    if (filters.conversationId) query = query.where('tool_approvals.conversation_id', '=', filters.conversationId)
    const rows = await query.orderBy('tool_approvals.created_at', 'desc').orderBy('tool_approvals.id', 'desc').limit(filters.limit).execute()
    return rows.map(viewOf)
  }

  /** Ends a request nobody answered (its timeout, or its turn's end), unless someone answered first. */
  async #close(id: string, status: 'expired' | 'cancelled'): Promise<void> {
    try {
      const closed = await this.db.transaction().execute(async (tx) => {
        const updated = await tx.updateTable('tool_approvals').set({ status, decided_at: new Date(this.clock.now()) }).where('id', '=', id).where('status', '=', 'pending').returningAll().executeTakeFirst()
        if (updated) await this.#auditDecision(tx, undefined, updated)
        return updated
      })
      if (closed) await this.#announce(viewOf(closed))
      else await this.#settled(id)
    } catch (error) {
      this.log.error('closing a tool approval failed', { approval_id: id, error: String(error) })
    }
  }

  /** The waiter of a request already answered hears its answer from the store. */
  async #settled(id: string): Promise<void> {
    const row = await this.db.selectFrom('tool_approvals').select('status').where('id', '=', id).executeTakeFirst()
    if (row && row.status !== 'pending') this.#waiting.get(id)?.(row.status)
  }

  #auditDecision(tx: Executor, actor: Actor | undefined, row: Selectable<ToolApprovalsTable>) {
    return audit(tx, actor?.origin, {
      action: 'approval_decision',
      model: 'ToolApproval',
      recordId: row.id,
      companyId: row.company_id,
      actorId: actor?.userId ?? null,
      changes: { status: row.status, server: row.server, tool: row.tool, waited_ms: new Date(row.decided_at!).getTime() - new Date(row.created_at).getTime() },
    })
  }

  /** Every process hears the answer (the waiting turn is on one of them); the conversation's card shows it. */
  async #announce(view: ApprovalView): Promise<void> {
    await this.events.publish('approval.decided', { approval_id: view.id, status: view.status as ApprovalOutcome })
    await this.#show(view)
  }

  async #show(view: ApprovalView): Promise<void> {
    if (view.conversation_id) await this.feed.publish(view.conversation_id, { type: 'approval', approval: view })
  }

  #visible(actor: Actor, id: string) {
    return this.#named(scoped(this.db, actor).selectFrom(TOOL_APPROVALS)).where('tool_approvals.id', '=', id).executeTakeFirst()
  }

  /** The requests with the name of whoever answered each. */
  #named(query: SelectQueryBuilder<Database, 'tool_approvals', {}>) {
    return query
      .leftJoin('users as decider', 'decider.id', 'tool_approvals.decided_by')
      .selectAll('tool_approvals')
      .select(sql<string | null>`coalesce(nullif(decider.display_name, ''), decider.username)`.as('decided_by_name'))
  }
}
