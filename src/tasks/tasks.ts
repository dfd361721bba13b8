import type { Progress } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import { insertMessage } from '../chat/messages.ts'
import type { ChatFeed } from '../chat/feed.ts'
import type { Clock } from '../clock.ts'
import { companyScoped } from '../db/scoped.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import type { Writes, WriteScope } from '../events/writes.ts'
import type { Logger } from '../logger.ts'
import type { Job, Scheduler } from '../scheduler.ts'
import type { Tracing } from '../tracing/tracing.ts'
import type { Drain } from '../lifecycle/drain.ts'
import type { McpCatalog } from '../mcp/catalog.ts'
import type { ToolTurn, ToolUser } from '../mcp/providers.ts'
import { AgentConfigRecord } from '../models/agent-config.ts'
import { BackgroundTask } from '../models/background-task.ts'
import { isUuid } from '../models/fields.ts'
import { getRecord } from '../models/records.ts'
import { capped, INTERRUPTED, outcomeNotice, outcomeOfResult, outcomeOfText, RESULT_MAX_CHARS, type ToolOutcome } from './notices.ts'
import { beat, cancelTask, endTask, insertWithinLimit, interruptTasks, writeProgress, type TaskRow } from './store.ts'

/** How often a process says its tasks are still running. */
export const HEARTBEAT_MS = 10_000
/** A running task whose heartbeat is older than this belongs to a process that is gone: six beats missed. */
export const STALE_MS = 60_000
/** How often each process looks for such tasks (with several processes; the embedded store has just the one). */
export const SWEEP_MS = 30_000

/** The tools of the background tasks themselves, by their own names: none of them runs in the background. */
const OWN_TOOLS = new Set(['async_run_tool', 'async_task_status', 'async_task_cancel'])
/** A task written in a caller's transaction that has not committed after this long never will: it is forgotten. */
const UNCOMMITTED_FORGOTTEN_MS = 10 * 60_000
const SEPARATOR = '__'

/** A task as its owner sees it (the BackgroundTask record). */
export interface TaskView {
  id: string
  company_id: string
  user_id: string
  conversation_id: string | null
  agent_id: string | null
  tool: string
  arguments: Record<string, unknown>
  status: TaskRow['status']
  progress: number | null
  progress_total: number | null
  progress_message: string | null
  result: string | null
  result_truncated: boolean
  error: string | null
  finished_at: string | null
  created_at: string
  updated_at: string
}

export interface RunRequest {
  /** Whose permissions the tool runs with, and whose task it is. */
  user: ToolUser
  /** The tool as `server__tool`. */
  tool: string
  arguments: Record<string, unknown>
  /** The chat turn that asks: the tool runs as that turn would run it, and the outcome is told in its conversation. */
  turn?: ToolTurn
}

export interface TaskDeps {
  db: Db
  /** Where a task's row is written (in the caller's transaction, when given its scope) and its start announced. */
  writes: Writes
  clock: Clock
  log: Logger
  catalog: McpCatalog
  feed: ChatFeed
  events: EventBus
  /** Tasks one person may have running at once. */
  perUser: number
  /**
   * Several processes share the store (PostgreSQL): a task is judged lost by its stale heartbeat. Otherwise this is
   * the only process, and whatever was running when it (re)starts was lost with the last one.
   */
  shared: boolean
  /** Runs the heartbeat and the sweep. */
  scheduler: Scheduler
  /** Where each task's run is a span, in the trace of the turn or request that started it. */
  tracing?: Tracing
  /** A draining process starts no task. */
  drain?: Drain
}

/** A task this process runs: how to stop it, and its progress on its way to the store. */
interface Running {
  controller: AbortController
  pending?: Progress
  writing?: Promise<void>
}

type ToolCall = (signal: AbortSignal, onProgress: (progress: Progress) => void) => Promise<ToolOutcome>

/** The tasks' rules act for a person, not a request: their own tasks, in their company. */
function actorOf(user: ToolUser & { companyId: string }): Actor {
  return { userId: user.userId, companyId: user.companyId, role: null, isSuperadmin: false }
}

/**
 * Tools run in the background: started by an agent's async_run_tool (or a script), persisted with their progress and
 * outcome, limited per person across processes, cancellable from any process, and told to the conversation when they
 * end. No task is lost silently: a stopping process marks its own interrupted, and a process that vanished is found
 * by its stale heartbeat (or, on the embedded store, at the next boot).
 */
export class BackgroundTasks {
  /** This process, as the `owner` of the tasks it runs. */
  readonly owner = Bun.randomUUIDv7()
  readonly #running = new Map<string, Running>()
  /** Every task execution still under way here, so close() can let them finish writing before the store goes. */
  readonly #executions = new Set<Promise<void>>()
  readonly #jobs: Job[] = []
  /** Tasks written and not yet committed: each starts once its write is heard (never, if it was rolled back). */
  readonly #starting = new Map<string, { begin: () => void; at: number }>()
  #unsubscribe: (() => void) | undefined
  #closing = false

  constructor(private readonly deps: TaskDeps) {
    deps.writes.on((write) => {
      if (write.type !== 'task') return
      this.#starting.get(write.id)?.begin()
      this.#starting.delete(write.id)
    })
  }

  /** At boot: settles what the last run of the platform left running, then keeps the heartbeat and the sweep going. */
  async start(): Promise<void> {
    const { events, shared, scheduler } = this.deps
    this.#unsubscribe = events.subscribe('task.cancel', ({ task_id }) => this.#running.get(task_id)?.controller.abort(new Error('cancelled')))
    if (shared) await this.sweep()
    else await this.#tellAll(await interruptTasks(this.deps.db, { all: true }, { error: INTERRUPTED, finished_at: this.#now() }))
    this.#jobs.push(scheduler.every('background tasks: heartbeat', HEARTBEAT_MS, () => this.heartbeat()))
    if (shared) this.#jobs.push(scheduler.every('background tasks: sweep', SWEEP_MS, () => this.sweep()))
  }

  /**
   * Starts the tool in the background and answers the task, running. Refused when the person may not use the tool,
   * names one of the task tools themselves, or already has as many tasks running as the limit allows.
   */
  async run(request: RunRequest, within?: WriteScope): Promise<TaskView> {
    this.deps.drain?.refuse('background tasks')
    const { user, tool, turn } = request
    // The tool runs as `user` (an agent's service account, perhaps); the task is the person's, counted against them.
    const owner = turn?.person ?? user
    if (this.#closing) throw new ApiError('unavailable', 'The server is stopping: start the task again in a moment.')
    if (!owner.companyId) throw new ApiError('forbidden', 'Background tasks run in a company, and you are not a member of any.')
    const actor = actorOf({ ...owner, companyId: owner.companyId })
    const at = tool.indexOf(SEPARATOR)
    const server = tool.slice(0, Math.max(at, 0))
    const name = at > 0 ? tool.slice(at + SEPARATOR.length) : ''
    if (!server || !name) throw new ApiError('validation_error', 'Name the tool as server__tool.', { errors: [{ path: 'tool', message: 'expected server__tool' }] })
    if (OWN_TOOLS.has(name)) {
      throw new ApiError('validation_error', `${name} cannot itself run in the background.`, { errors: [{ path: 'tool', message: 'a background task tool' }] })
    }
    const [judge, provider] = await Promise.all([this.deps.catalog.judge(user), this.deps.catalog.provider(user, server)])
    // One answer for a server that is not there and one the person may not use: neither is theirs to learn about.
    // In a turn the task runs the agent's tools alone: async_run_tool must not reach past what the agent was given.
    // A tool behind a person's yes runs in a turn's task like in the turn: the turn's own call asks, in its
    // conversation, before the tool starts. Outside a conversation there is nobody to ask.
    const verdict = judge.verdict(server, name)
    const usable = verdict.decision === 'allow' || (turn !== undefined && verdict.decision === 'approve')
    const allowed = provider && judge.server(server) && usable && (!turn || turn.offers(tool))
    if (!allowed && provider && judge.server(server) && verdict.decision === 'approve') {
      throw new ApiError('forbidden', `The tool ${name} on ${server} needs a person’s approval before each call, which a task started outside a conversation cannot ask for: start it from the web chat.`)
    }
    if (!allowed) throw new ApiError('forbidden', `You may not use the tool ${name} on ${server}.`)

    const args = request.arguments
    const call: ToolCall = turn
      ? async (signal, onProgress) => outcomeOfText(await turn.callTool(tool, args, signal, onProgress))
      : async (signal, onProgress) => outcomeOfResult(await provider.callTool(user, { name, arguments: args }, { signal, onProgress }))
    const id = Bun.randomUUIDv7()
    const task = { id, conversation_id: turn?.conversationId ?? null, agent_id: turn?.agentId ?? null, tool, arguments: args, owner: this.owner, heartbeat_at: this.#now() }
    const begin = () => {
      const running: Running = { controller: new AbortController() }
      this.#running.set(id, running)
      const execution = this.#execute(id, running, call).finally(() => {
        this.#running.delete(id)
        this.#executions.delete(execution)
      })
      this.#executions.add(execution)
    }
    this.#forgetUncommitted()
    this.#starting.set(id, { begin, at: this.#now().getTime() })
    try {
      return await this.deps.writes.transaction(
        actor,
        async ({ db, announce }) => {
          await insertWithinLimit(db, actor, task, this.deps.perUser)
          announce({ type: 'task', verb: 'start', id, user_id: actor.userId })
          return (await getRecord(db, actor, BackgroundTask, id)).record as unknown as TaskView
        },
        within,
      )
    } catch (error) {
      this.#starting.delete(id)
      throw error
    }
  }

  /** Tasks whose caller's transaction never committed (it rolled back): nothing will start them. */
  #forgetUncommitted(): void {
    const before = this.#now().getTime() - UNCOMMITTED_FORGOTTEN_MS
    for (const [id, { at }] of this.#starting) if (at < before) this.#starting.delete(id)
  }

  /** The person's own task; another's is not found. */
  async status(user: ToolUser, id: string): Promise<TaskView> {
    // An id that is not one names no task: not found, like another person's.
    if (!user.companyId || !isUuid(id)) throw new ApiError('not_found', `No BackgroundTask with id ${id}.`)
    const { record } = await getRecord(this.deps.db, actorOf({ ...user, companyId: user.companyId }), BackgroundTask, id.toLowerCase())
    return record as unknown as TaskView
  }

  /**
   * Cancels the person's own running task, wherever it runs: the row first (so the outcome is settled even if that
   * process misses the event), then the process running it stops the tool. A task already ended is left as it is.
   */
  async cancel(user: ToolUser, id: string): Promise<{ cancelled: boolean; task: TaskView }> {
    const before = await this.status(user, id)
    const actor = actorOf({ ...user, companyId: before.company_id })
    const ended = await cancelTask(this.deps.db, actor, before.id, this.#now())
    if (ended) {
      await this.deps.events.publish('task.cancel', { task_id: ended.id })
      await this.#tell(ended)
    }
    return { cancelled: ended !== undefined, task: await this.status(user, before.id) }
  }

  /** How many tasks this process is running now. */
  get running(): number {
    return this.#running.size
  }

  /**
   * Refreshes the heartbeat of the tasks this process runs. One whose row has ended meanwhile (cancelled while the
   * event was lost, or judged gone by another process) is stopped here too.
   */
  async heartbeat(): Promise<void> {
    const ids = [...this.#running.keys()]
    const alive = await beat(this.deps.db, this.owner, ids, this.#now())
    for (const id of ids) if (!alive.has(id)) this.#running.get(id)?.controller.abort(new Error('ended elsewhere'))
  }

  /** Marks other processes' tasks interrupted once their heartbeat is stale, and tells their conversations. */
  async sweep(): Promise<number> {
    await this.heartbeat()
    const staleBefore = new Date(this.deps.clock.now() - STALE_MS)
    const ended = await interruptTasks(this.deps.db, { staleBefore, notOwner: this.owner }, { error: INTERRUPTED, finished_at: this.#now() })
    await this.#tellAll(ended)
    return ended.length
  }

  /**
   * The process is stopping: its running tasks are marked interrupted (and their conversations told) before their
   * tools are stopped, so none of them is left looking as if it were still running.
   */
  async close(): Promise<void> {
    if (this.#closing) return
    this.#closing = true
    await Promise.all(this.#jobs.splice(0).map((job) => job.stop()))
    this.#unsubscribe?.()
    const ids = [...this.#running.keys()]
    const ended = await interruptTasks(this.deps.db, { owner: this.owner, ids }, { error: INTERRUPTED, finished_at: this.#now() }).catch((error) => {
      this.deps.log.error('background tasks could not be marked interrupted', { tasks: ids, error: String(error) })
      return []
    })
    await this.#tellAll(ended)
    for (const id of ids) this.#running.get(id)?.controller.abort(new Error('the server is stopping'))
    // A tool that ignores its signal is not waited for long: its row already says how it ended.
    if (this.#executions.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([Promise.allSettled([...this.#executions]), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))])
    clearTimeout(timer)
  }

  async #execute(id: string, running: Running, call: ToolCall): Promise<void> {
    const { signal } = running.controller
    const onProgress = (progress: Progress) => {
      running.pending = progress
      running.writing ??= this.#writeProgress(id, running)
    }
    let outcome: ToolOutcome
    try {
      outcome = this.deps.tracing ? await this.deps.tracing.span('background task', { 'switchboard.task': id }, () => call(signal, onProgress)) : await call(signal, onProgress)
    } catch (error) {
      // Stopped on purpose: whoever stopped it has already ended the row.
      if (signal.aborted) return
      outcome = { text: (error as Error).message || String(error), isError: true }
    }
    if (signal.aborted) return
    await running.writing
    const result = capped(outcome.text, RESULT_MAX_CHARS)
    const end = outcome.isError
      ? { status: 'failed' as const, error: result.text || 'The tool reported an error without a message.', finished_at: this.#now() }
      : { status: 'completed' as const, result: result.text, result_truncated: result.truncated, finished_at: this.#now() }
    try {
      const ended = await endTask(this.deps.db, id, end)
      if (ended) await this.#tell(ended)
    } catch (error) {
      this.deps.log.error('background task outcome not stored', { task_id: id, error: String(error) })
    }
  }

  /** Writes the latest progress, one write at a time: notifications that arrive meanwhile fold into the next. */
  async #writeProgress(id: string, running: Running): Promise<void> {
    try {
      while (running.pending) {
        const progress = running.pending
        running.pending = undefined
        await writeProgress(this.deps.db, id, progress).catch((error) => this.deps.log.warn('background task progress not stored', { task_id: id, error: String(error) }))
      }
    } finally {
      running.writing = undefined
    }
  }

  async #tellAll(tasks: TaskRow[]): Promise<void> {
    for (const task of tasks) await this.#tell(task)
  }

  /**
   * Tells the task's conversation how it ended: a message in the agent's name, stored (the model reads it in later
   * turns) and published (open web chats show it). A failure here is logged: the task's row has the outcome anyway.
   */
  async #tell(task: TaskRow): Promise<void> {
    if (!task.conversation_id) return
    const { db, feed, log } = this.deps
    try {
      const text = outcomeNotice(task)
      const agent = task.agent_id
        ? await companyScoped(db, task.company_id).selectFrom(AgentConfigRecord).select('name').where('id', '=', task.agent_id).executeTakeFirst()
        : undefined
      const base = { company_id: task.company_id, conversation_id: task.conversation_id, sender_id: null, agent_id: task.agent_id }
      const messageId = await insertMessage(db, { ...base, role: 'agent', text, status: 'complete' })
      await feed.publish(task.conversation_id, { type: 'message', text, agent: agent?.name ?? 'Background task', message_id: messageId, task_id: task.id })
    } catch (error) {
      log.error('background task outcome not told to its conversation', { task_id: task.id, conversation_id: task.conversation_id, error: String(error) })
    }
  }

  #now(): Date {
    return new Date(this.deps.clock.now())
  }
}
