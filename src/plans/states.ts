import type { PlanStatus, PlanTaskStatus } from '../db/schema.ts'
import { ApiError } from '../errors.ts'

/** Where each task state may go (DESIGN §4, Plans); anything else is refused with the reason. */
const TASK_MOVES: Record<PlanTaskStatus, readonly PlanTaskStatus[]> = {
  pending: ['in_progress', 'skipped'],
  in_progress: ['completed', 'failed', 'skipped'],
  failed: ['pending'],
  completed: [],
  skipped: [],
}

/** Why a task may not go from `from` to `to`; undefined when it may. */
export function refusedTaskMove(from: PlanTaskStatus, to: PlanTaskStatus): string | undefined {
  if (TASK_MOVES[from].includes(to)) return undefined
  if (from === to) return `The task is already ${label(to)}.`
  if (from === 'pending' && (to === 'completed' || to === 'failed')) {
    return `A pending task cannot be marked ${label(to)}: set it in_progress first, then ${to} (skipping a step is not allowed).`
  }
  if (TASK_MOVES[from].length === 0) return `The task is ${label(from)}, which is final: it cannot become ${label(to)}.`
  return `A task that is ${label(from)} can only become ${TASK_MOVES[from].join(' or ')}, not ${to}.`
}

export const PLAN_ACTIONS = ['execute', 'pause', 'resume', 'cancel'] as const
export type PlanAction = (typeof PLAN_ACTIONS)[number]

/** Plans that still count as the conversation's plan: at most one of these per conversation. */
export const LIVE_PLAN: readonly PlanStatus[] = ['draft', 'active', 'paused']

export function isFinal(status: PlanStatus): boolean {
  return status === 'completed' || status === 'cancelled'
}

/** The status an action leads to from `status`, or why it may not be taken. */
export function planAction(status: PlanStatus, action: PlanAction): { to: PlanStatus } | { refused: string } {
  if (isFinal(status)) return { refused: `The plan is ${status}, which is final: it cannot be ${PAST[action]}.` }
  const from: Record<PlanAction, PlanStatus[]> = { execute: ['draft'], pause: ['active'], resume: ['paused'], cancel: ['draft', 'active', 'paused'] }
  const to: Record<PlanAction, PlanStatus> = { execute: 'active', pause: 'paused', resume: 'active', cancel: 'cancelled' }
  if (from[action].includes(status)) return { to: to[action] }
  const hint: Record<PlanAction, string> = {
    execute: status === 'paused' ? ' Resume it instead.' : ' It is already running.',
    pause: status === 'draft' ? ' Execute it first.' : ' It is already paused.',
    resume: status === 'draft' ? ' Execute it first.' : ' It is already running.',
    cancel: '',
  }
  return { refused: `Only a ${from[action].join(' or ')} plan can be ${PAST[action]}; this one is ${status}.${hint[action]}` }
}

const PAST: Record<PlanAction, string> = { execute: 'executed', pause: 'paused', resume: 'resumed', cancel: 'cancelled' }

function label(status: PlanTaskStatus): string {
  return status.replace('_', ' ')
}

/**
 * What the plan's tasks make of it: a failed task pauses an active plan, and once every task is completed or
 * skipped the plan is completed. Undefined when the tasks change nothing.
 */
export function settledStatus(status: PlanStatus, tasks: ReadonlyArray<{ status: PlanTaskStatus }>): PlanStatus | undefined {
  if (status !== 'active' && status !== 'paused') return undefined
  if (tasks.length > 0 && tasks.every((t) => t.status === 'completed' || t.status === 'skipped')) return 'completed'
  if (status === 'active' && tasks.some((t) => t.status === 'failed')) return 'paused'
  return undefined
}

/**
 * While a plan is active its words (task titles, descriptions, notes) become the continuation messages, sent with
 * the rights of whoever set it going: so only they may change them then. Anyone else pauses it first, and resuming
 * makes it theirs.
 */
export function refuseWordsOfOthers(plan: { status: PlanStatus; driven_by: string | null }, user: { userId: string }): void {
  if (plan.status === 'active' && plan.driven_by !== null && plan.driven_by !== user.userId) {
    throw new ApiError('conflict', 'While the plan is active only the person who set it going may change its words (titles, descriptions, notes): pause it first; resuming makes it yours.')
  }
}
