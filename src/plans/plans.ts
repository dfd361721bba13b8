import { sql } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import type { Actor } from '../auth/actor.ts'
import type { ChatFeed } from '../chat/feed.ts'
import { insertMessage } from '../chat/messages.ts'
import { scoped } from '../db/scoped.ts'
import { runTemplate, slot } from '../db/templates.ts'
import type { Db, Executor, PlanStatus, PlanTaskStatus, Row } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { Writes, WriteScope, Written } from '../events/writes.ts'
import { Plan, PlanTask } from '../models/plan.ts'
import { WebchatConversation } from '../models/webchat.ts'
import { parseInput } from '../mcp/tool-input.ts'
import { MAX_TASKS, NewPlan, PlanChanges, TaskMove, type TaskRef } from './inputs.ts'
import { isFinal, LIVE_PLAN, planAction, refusedTaskMove, refuseWordsOfOthers, settledStatus } from './states.ts'
import type { PlanView, TaskView } from './view.ts'

/** Continuation messages one execution of a plan may send (SPEC §8). */
export const MAX_CONTINUATIONS = 20

/** Who works on a plan: a person, or a tool running for one. Plans are their conversation's participants'. */
export type PlanUser = Pick<Actor, 'userId' | 'companyId'>

/** Where a task is looked for when it is named by its number: a plan, or a conversation's live plan. */
export interface PlanPlace {
  plan_id?: string
  conversation_id?: string
}

type PlanRow = Row<'plans'>
type TaskRow = Row<'plan_tasks'>
type PlanWritten = Extract<Written, { type: 'plan' }>

/** The record rules speak of people: a tool's user is one, with no role (plans ask only who takes part). */
function asActor(user: PlanUser): Actor {
  return { userId: user.userId, companyId: user.companyId, role: null, isSuperadmin: false }
}

const NO_PLAN = () => new ApiError('not_found', 'No such plan in a conversation you take part in.')

/**
 * Plans and their tasks, for the planning tools and the REST API alike: both come here, so both keep the same
 * state machines (DESIGN §4, Plans). Every change runs in a transaction on the locked plan (the caller's, when it
 * gives its write scope) and announces the plan as it now stands; once that has committed, the conversation hears
 * it (the chat's plan panel) and so does whoever listens for plans set going (auto-continuation).
 */
export class Plans {
  readonly #activated = new Set<(plan: PlanView) => void>()

  constructor(
    private readonly db: Db,
    private readonly writes: Writes,
    private readonly feed: ChatFeed,
  ) {
    writes.on((write) => (write.type === 'plan' ? this.#committed(write) : undefined))
  }

  /** Hears every plan that became active (executed, resumed) in this process. */
  onActivated(listener: (plan: PlanView) => void): () => void {
    this.#activated.add(listener)
    return () => void this.#activated.delete(listener)
  }

  /** A new draft plan with its tasks; a conversation holds one live plan (draft, active or paused) at a time. */
  async create(user: PlanUser, conversationId: string, input: unknown, within?: WriteScope): Promise<PlanView> {
    const plan = parseInput(NewPlan, input)
    return this.writes.transaction(asActor(user), async ({ db: tx, announce }) => {
      const conversation = await scoped(tx, asActor(user))
        .selectFrom(WebchatConversation)
        .select(['id', 'company_id'])
        .where('id', '=', conversationId.toLowerCase())
        .forUpdate()
        .executeTakeFirst()
      if (!conversation) throw new ApiError('not_found', 'No such conversation, or you do not take part in it.')
      const live = await tx.selectFrom('plans').select(['title', 'status']).where('conversation_id', '=', conversation.id).where('status', 'in', LIVE_PLAN).executeTakeFirst()
      if (live) {
        throw new ApiError('conflict', `This conversation already has a ${live.status} plan ("${live.title}"); finish or cancel it before making another.`)
      }
      const id = Bun.randomUUIDv7()
      const base = { company_id: conversation.company_id }
      await tx
        .insertInto('plans')
        .values({ ...base, id, conversation_id: conversation.id, title: plan.title, description: plan.description ?? '', created_by: user.userId })
        .execute()
      await tx
        .insertInto('plan_tasks')
        .values(plan.tasks.map((t, i) => ({ ...base, id: Bun.randomUUIDv7(), plan_id: id, position: i + 1, title: t.title, description: t.description ?? '' })))
        .execute()
      const view = await read(tx, id)
      announce({ type: 'plan', change: 'plan_created', plan: view, activated: false })
      return view
    }, within)
  }

  /** A plan the user takes part in, with its tasks. */
  async read(user: PlanUser, planId: string): Promise<PlanView> {
    const row = await scoped(this.db, asActor(user)).selectFrom(Plan).select('id').where('id', '=', planId.toLowerCase()).executeTakeFirst()
    if (!row) throw NO_PLAN()
    return read(this.db, row.id)
  }

  /** The conversation's plan: its live one, else its latest; undefined when it never had one. */
  async ofConversation(user: PlanUser, conversationId: string): Promise<PlanView | undefined> {
    const conversation = await scoped(this.db, asActor(user)).selectFrom(WebchatConversation).select('id').where('id', '=', conversationId.toLowerCase()).executeTakeFirst()
    if (!conversation) throw new ApiError('not_found', 'No such conversation, or you do not take part in it.')
    const row = await this.db
      .selectFrom('plans')
      .select('id')
      .where('conversation_id', '=', conversation.id)
      .orderBy(sql`status in ('draft', 'active', 'paused')`, 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    return row ? read(this.db, row.id) : undefined
  }

  /**
   * Moves one task (plan_task_update). Tasks move only while their plan is active, in order, one step at a time; a
   * failed task pauses the plan, and the last one done completes it.
   */
  async moveTask(user: PlanUser, place: PlanPlace, input: unknown, within?: WriteScope): Promise<PlanView> {
    const move = parseInput(TaskMove, input)
    return this.#change(user, await this.#planOf(user, place, move.task), within, async (tx, plan, tasks) => {
      const task = pick(tasks, move.task)
      if (plan.status !== 'active') {
        const hint = plan.status === 'draft' ? ' Execute it first.' : plan.status === 'paused' ? ' Resume it first.' : ''
        throw new ApiError('conflict', `Tasks move only while their plan is active; this plan is ${plan.status}.${hint}`)
      }
      if (move.note) refuseWordsOfOthers(plan, user)
      const refused = refusedTaskMove(task.status, move.status)
      if (refused) throw new ApiError('conflict', `Task ${numberOf(tasks, task)} ("${task.title}"): ${refused}`)
      if (move.status === 'in_progress') {
        const before = tasks.slice(0, tasks.indexOf(task)).find((t) => t.status !== 'completed' && t.status !== 'skipped')
        if (before) {
          throw new ApiError(
            'conflict',
            `Task ${numberOf(tasks, task)} cannot start before task ${numberOf(tasks, before)} ("${before.title}") is done: tasks are done in order (complete or skip it first).`,
          )
        }
      }
      await tx
        .updateTable('plan_tasks')
        .set({ status: move.status, note: move.note ?? task.note, version: sql`version + 1`, updated_at: sql`now()` })
        .where('id', '=', task.id)
        .execute()
      task.status = move.status
      return { settle: true }
    })
  }

  /**
   * plan_update: edits, additions, removals and a new order of pending tasks, then an action, all or nothing. A
   * finished plan changes no more.
   */
  async update(user: PlanUser, planId: string, input: unknown, { byAgent = false, within }: { byAgent?: boolean; within?: WriteScope } = {}): Promise<PlanView> {
    const changes = parseInput(PlanChanges, input)
    return this.#change(user, planId, within, async (tx, plan, tasks) => {
      if (isFinal(plan.status)) throw new ApiError('conflict', `The plan is ${plan.status}, which is final: it changes no more.`)
      if (changes.update_tasks?.length || changes.add_tasks?.length) refuseWordsOfOthers(plan, user)
      for (const edit of changes.update_tasks ?? []) {
        const task = pick(tasks, edit.task)
        await tx
          .updateTable('plan_tasks')
          .set({ title: edit.title ?? task.title, description: edit.description ?? task.description, version: sql`version + 1`, updated_at: sql`now()` })
          .where('id', '=', task.id)
          .execute()
      }
      // Removals and reordering name tasks as the plan stood before this change: numbers do not shift under them.
      const removed = (changes.remove_tasks ?? []).map((ref) => pick(tasks, ref))
      const reordered = (changes.reorder ?? []).map((ref) => pick(tasks, ref))
      for (const task of removed) {
        if (task.status !== 'pending') throw new ApiError('conflict', `Task ${numberOf(tasks, task)} ("${task.title}") is ${task.status.replace('_', ' ')}: only pending tasks can be removed.`)
      }
      if (removed.length) await tx.deleteFrom('plan_tasks').where('id', 'in', removed.map((t) => t.id)).execute()
      let remaining = tasks.filter((t) => !removed.includes(t))
      if (changes.reorder) remaining = await reorder(tx, remaining, reordered)
      const added = changes.add_tasks ?? []
      if (remaining.length + added.length > MAX_TASKS) throw new ApiError('conflict', `A plan holds at most ${MAX_TASKS} tasks.`)
      let position = Math.max(0, ...remaining.map((t) => t.position))
      for (const t of added) {
        const row = { id: Bun.randomUUIDv7(), company_id: plan.company_id, plan_id: plan.id, position: ++position, title: t.title, description: t.description ?? '' }
        await tx.insertInto('plan_tasks').values(row).execute()
        remaining.push({ ...row, status: 'pending', note: '' } as TaskRow)
      }
      tasks.splice(0, tasks.length, ...remaining)
      if (!changes.action) return { settle: false }
      const next = planAction(plan.status, changes.action)
      if ('refused' in next) throw new ApiError('conflict', next.refused)
      if (changes.action === 'execute' && tasks.length === 0) throw new ApiError('conflict', 'The plan has no tasks: add some before executing it.')
      const starts = next.to === 'active'
      // A person's execute or resume grants a new share of continuations; an agent's own does not, or pausing and
      // resuming itself would let it go on without end.
      const share = starts && !byAgent ? { continuations: 0 } : {}
      await tx
        .updateTable('plans')
        .set({ status: next.to, ...(starts ? { driven_by: user.userId, ...share } : {}), awaiting_approval_id: null, version: sql`version + 1`, updated_at: sql`now()` })
        .where('id', '=', plan.id)
        .execute()
      plan.status = next.to
      return { settle: false, activated: starts }
    })
  }

  /**
   * Counts one continuation message, if the plan is still active and has not had its share: the re-reading of the
   * status before each continuation (a pause made anywhere stops the next one). The plan as it now stands, or
   * undefined when no continuation may be sent.
   */
  async countContinuation(planId: string): Promise<PlanView | undefined> {
    const row = await this.db
      .updateTable('plans')
      .set({ continuations: sql`continuations + 1` })
      .where('id', '=', planId)
      .where('status', '=', 'active')
      .where('continuations', '<', MAX_CONTINUATIONS)
      .returning('id')
      .executeTakeFirst()
    if (!row) return undefined
    const view = await read(this.db, row.id)
    // Said like any change of the plan, so its panel's count keeps up on every participant's page.
    await this.writes.announced({ type: 'plan', change: 'plan_updated', plan: view, activated: false })
    return view
  }

  /** The conversation's active plan as the kernel sees it (no caller): what auto-continuation acts on. */
  async active(conversationId: string): Promise<(PlanView & { company_id: string; driven_by: string | null }) | undefined> {
    // Compiled once: every turn's end asks it.
    const [row] = await runTemplate<{ id: string; company_id: string; driven_by: string | null }>(
      this.db,
      'plans|active',
      () => this.db.selectFrom('plans').select(['id', 'company_id', 'driven_by']).where('conversation_id', '=', slot(0)).where('status', '=', 'active'),
      [conversationId],
      'keyed',
    )
    return row ? { ...(await read(this.db, row.id)), company_id: row.company_id, driven_by: row.driven_by } : undefined
  }

  /** Pauses an active plan the platform cannot go on with, telling the conversation why. */
  async halt(planId: string, why: string): Promise<void> {
    // Nobody asked for this: the platform does it, and says so in the conversation.
    await this.writes.unattended(async ({ db, announce }) => {
      const row = await db
        .updateTable('plans')
        .set({ status: 'paused', version: sql`version + 1`, updated_at: sql`now()` })
        .where('id', '=', planId)
        .where('status', '=', 'active')
        .returning(['conversation_id', 'company_id'])
        .executeTakeFirst()
      if (!row) return
      // Kept with the conversation, so whoever opens it later reads why the work stopped.
      const conversation = await db.selectFrom('webchat_conversations').select('agent_id').where('id', '=', row.conversation_id).executeTakeFirst()
      await insertMessage(db, { company_id: row.company_id, conversation_id: row.conversation_id, sender_id: null, agent_id: conversation?.agent_id ?? null, role: 'system', text: why, status: 'complete' })
      await this.feed.publish(row.conversation_id, { type: 'notice', text: why })
      announce({ type: 'plan', change: 'plan_updated', plan: await read(db, planId), activated: false })
    })
  }

  /**
   * The conversation's active plan waits for a person's yes on a tool call: paused meanwhile, so nobody takes it for
   * running and no continuation is sent, with the request kept beside it.
   */
  async awaitApproval(conversationId: string, approvalId: string): Promise<void> {
    await this.writes.unattended(async ({ db, announce }) => {
      const row = await db
        .updateTable('plans')
        .set({ status: 'paused', awaiting_approval_id: approvalId, version: sql`version + 1`, updated_at: sql`now()` })
        .where('conversation_id', '=', conversationId)
        .where('status', '=', 'active')
        .returning('id')
        .executeTakeFirst()
      if (row) announce({ type: 'plan', change: 'plan_updated', plan: await read(db, row.id), activated: false })
    })
  }

  /**
   * The request a plan waited on has ended: the plan is active again, unless a person paused, resumed or cancelled it
   * in between. With `goOn` (an answer, or nobody's in time) continuation is woken, for where no turn runs (a
   * background task's request); where the asking turn still runs, its end goes on instead. A stopped turn's request
   * leaves the plan active and waiting for the person, as any stopped turn does.
   */
  async approvalAnswered(approvalId: string, { goOn }: { goOn: boolean }): Promise<void> {
    await this.writes.unattended(async ({ db, announce }) => {
      const row = await db
        .updateTable('plans')
        .set({ status: 'active', awaiting_approval_id: null, version: sql`version + 1`, updated_at: sql`now()` })
        .where('awaiting_approval_id', '=', approvalId)
        .where('status', '=', 'paused')
        .returning('id')
        .executeTakeFirst()
      if (row) announce({ type: 'plan', change: 'plan_updated', plan: await read(db, row.id), activated: goOn })
    })
  }

  /** Finds the plan a task reference is about: the plan named, the task's own (by id), or the conversation's live plan. */
  async #planOf(user: PlanUser, place: PlanPlace, ref: TaskRef): Promise<string> {
    if (place.plan_id) return place.plan_id.toLowerCase()
    if (typeof ref === 'string') {
      const task = await scoped(this.db, asActor(user)).selectFrom(PlanTask).select('plan_id').where('id', '=', ref.toLowerCase()).executeTakeFirst()
      if (task) return task.plan_id
      // Someone else's task reads like one that never was.
      if (!place.conversation_id) throw new ApiError('not_found', `No task ${ref} in a plan you take part in.`)
    }
    if (!place.conversation_id) throw new ApiError('validation_error', 'Say which plan: name the task by its id, or give the plan or conversation.', { errors: [{ path: 'task', message: 'no plan to look in' }] })
    const plan = await this.ofConversation(user, place.conversation_id)
    if (!plan || isFinal(plan.status)) throw new ApiError('not_found', 'This conversation has no live plan: make one with plan_create.')
    return plan.id
  }

  /**
   * One change to a plan: locked, changed, settled (a failed task pauses it; all done completes it) and committed,
   * then published, and continuation woken when it became active.
   */
  async #change(
    user: PlanUser,
    planId: string,
    within: WriteScope | undefined,
    apply: (tx: Executor, plan: PlanRow, tasks: TaskRow[]) => Promise<{ settle: boolean; activated?: boolean }>,
  ): Promise<PlanView> {
    return this.writes.transaction(asActor(user), async ({ db: tx, announce }) => {
      const plan = await scoped(tx, asActor(user)).selectFrom(Plan).selectAll().where('id', '=', planId.toLowerCase()).forUpdate().executeTakeFirst()
      if (!plan) throw NO_PLAN()
      const tasks = await tx.selectFrom('plan_tasks').selectAll().where('plan_id', '=', plan.id).orderBy('position').orderBy('id').execute()
      const outcome = await apply(tx, plan, tasks)
      if (outcome.settle) {
        const settled = settledStatus(plan.status, tasks)
        if (settled) await tx.updateTable('plans').set({ status: settled, version: sql`version + 1`, updated_at: sql`now()` }).where('id', '=', plan.id).execute()
      }
      const view = await read(tx, plan.id)
      announce({ type: 'plan', change: outcome.settle ? 'plan_task_update' : 'plan_updated', plan: view, activated: outcome.activated === true })
      return view
    }, within)
  }

  /** A plan change has committed: its conversation sees the plan, and a plan set going wakes continuation. */
  async #committed({ change, plan, activated }: PlanWritten): Promise<void> {
    await this.feed.publish(plan.conversation_id, { type: change, plan })
    if (activated) for (const listener of this.#activated) listener(plan)
  }
}

/** A plan and its tasks, in order, as the view shows them. */
async function read(db: Executor, planId: string): Promise<PlanView> {
  // One statement, so one snapshot: two reads side by side could show a plan already paused beside the task whose
  // failure paused it, still in progress, when a write commits between them.
  const plan = await db
    .selectFrom('plans')
    .selectAll()
    .select((eb) =>
      jsonArrayFrom(
        eb.selectFrom('plan_tasks').select(['id', 'title', 'description', 'status', 'note']).whereRef('plan_id', '=', 'plans.id').orderBy('position').orderBy('id'),
      ).as('tasks'),
    )
    .where('id', '=', planId)
    .executeTakeFirstOrThrow()
  const { tasks } = plan
  return {
    id: plan.id,
    conversation_id: plan.conversation_id,
    title: plan.title,
    description: plan.description,
    status: plan.status as PlanStatus,
    continuations: plan.continuations,
    awaiting_approval_id: plan.awaiting_approval_id,
    created_at: new Date(plan.created_at).toISOString(),
    updated_at: new Date(plan.updated_at).toISOString(),
    tasks: tasks.map((t, i): TaskView => ({ id: t.id, number: i + 1, title: t.title, description: t.description, status: t.status as PlanTaskStatus, note: t.note })),
  }
}

/** The task a reference names, by id or by number; a 404 names what was asked. */
function pick(tasks: TaskRow[], ref: TaskRef): TaskRow {
  const task = typeof ref === 'number' ? tasks[ref - 1] : tasks.find((t) => t.id === ref.toLowerCase())
  if (!task) throw new ApiError('not_found', `The plan has no task ${ref}${typeof ref === 'number' ? ` (it has ${tasks.length})` : ''}.`)
  return task
}

function numberOf(tasks: TaskRow[], task: TaskRow): number {
  return tasks.indexOf(task) + 1
}

/** Puts the pending tasks in the order given (which must name each of them once); the others keep their places. */
async function reorder(tx: Executor, tasks: TaskRow[], order: TaskRow[]): Promise<TaskRow[]> {
  const pending = tasks.filter((t) => t.status === 'pending')
  const named = new Set(order)
  if (order.some((t) => t.status !== 'pending')) throw new ApiError('conflict', 'Only pending tasks can be reordered; the others keep their places.')
  if (named.size !== order.length || pending.some((t) => !named.has(t))) {
    throw new ApiError('validation_error', `reorder must name every pending task once (${pending.length} of them).`, { errors: [{ path: 'reorder', message: 'not every pending task, once' }] })
  }
  const slots = pending.map((t) => t.position)
  const placed = new Map(order.map((t, i) => [t, slots[i]!]))
  for (const [task, position] of placed) {
    if (task.position !== position) await tx.updateTable('plan_tasks').set({ position, version: sql`version + 1`, updated_at: sql`now()` }).where('id', '=', task.id).execute()
  }
  return tasks.map((t) => (placed.has(t) ? { ...t, position: placed.get(t)! } : t)).sort((a, b) => a.position - b.position)
}
