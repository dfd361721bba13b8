import type { PlanStatus, PlanTaskStatus } from '../db/schema.ts'

/** A task as people, agents and scripts see it. */
export interface TaskView {
  id: string
  /** Its place in the plan, from 1. */
  number: number
  title: string
  description: string
  status: PlanTaskStatus
  note: string
}

/** A plan with its tasks in order: what the tools answer, the API returns and the chat's plan panel shows. */
export interface PlanView {
  id: string
  conversation_id: string
  title: string
  description: string
  status: PlanStatus
  continuations: number
  /** The tool approval its work waits on, paused until it is answered; null otherwise. */
  awaiting_approval_id: string | null
  created_at: string
  updated_at: string
  tasks: TaskView[]
}

/** The plan as a model reads it: short, every task numbered with its state. */
export function planText(plan: PlanView): string {
  const lines = plan.tasks.map((t) => `${t.number}. [${t.status}] ${t.title}${t.note ? ` — ${t.note}` : ''} (id ${t.id})`)
  const about = plan.description ? `\n${plan.description}` : ''
  return `Plan "${plan.title}" (${plan.status}), id ${plan.id}${about}\n${lines.join('\n')}`
}

/** The task a plan is at: the one in progress, else the first pending one. */
export function currentTask(plan: PlanView): TaskView | undefined {
  return plan.tasks.find((t) => t.status === 'in_progress') ?? plan.tasks.find((t) => t.status === 'pending')
}
