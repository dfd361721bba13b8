/** @jsxImportSource hono/jsx */
import type { PlanView } from '../../plans/view.ts'
import { Alert } from '../components/feedback.tsx'

/** The buttons a plan in this state offers, with what they do. */
const ACTIONS: Record<PlanView['status'], Array<{ action: 'execute' | 'pause' | 'resume' | 'cancel'; label: string }>> = {
  draft: [
    { action: 'execute', label: 'Execute' },
    { action: 'cancel', label: 'Cancel' },
  ],
  active: [
    { action: 'pause', label: 'Pause' },
    { action: 'cancel', label: 'Cancel' },
  ],
  paused: [
    { action: 'resume', label: 'Resume' },
    { action: 'cancel', label: 'Cancel' },
  ],
  completed: [],
  cancelled: [],
}

const TASK_LABEL: Record<PlanView['tasks'][number]['status'], string> = {
  pending: 'pending',
  in_progress: 'in progress',
  completed: 'done',
  failed: 'failed',
  skipped: 'skipped',
}

/**
 * The conversation's plan and its tasks. It redraws its content when the socket says the plan changed (plan_created,
 * plan_task_update, plan_updated, on any process); its buttons go through POST /api/plans/{id}/update.
 *
 * The section itself stays and only its content is swapped: htmx queues a refresh asked for while one is in flight on
 * the element that asked, and drops it if that element has been swapped out meanwhile, which left the panel a change
 * behind.
 */
export function PlanPanel(props: PlanProps) {
  return (
    <section id="plan" class="panel plan" aria-labelledby="plan-title" hx-get={`/chat/${props.conversationId}/plan`} hx-trigger="chat-plan-stale from:body" hx-swap="innerHTML">
      <PlanContent {...props} />
    </section>
  )
}

interface PlanProps {
  conversationId: string
  plan?: PlanView
  problem?: string
}

/** What the panel shows: the whole page's first draw, and each redraw. */
export function PlanContent({ conversationId, plan, problem }: PlanProps) {
  return (
    <>
      <h2 id="plan-title">
        Plan {plan ? <span class={`tag plan-${plan.status}`}>{plan.status}</span> : null}
      </h2>
      {plan ? (
        <>
          <p class="plan-name">{plan.title}</p>
          <ol class="plan-tasks">
            {plan.tasks.map((t) => (
              <li class={`task task-${t.status}`} data-id={t.id} data-status={t.status}>
                <span class="task-title">{t.title}</span>
                <span class="task-state">{TASK_LABEL[t.status]}</span>
              </li>
            ))}
          </ol>
          {plan.status === 'active' ? <p class="muted">The agent is sent a continuation message after each turn ({plan.continuations} of 20 so far).</p> : null}
          {plan.status === 'paused' && plan.awaiting_approval_id ? <p class="muted plan-awaiting">Paused while a tool call waits for approval; it goes on once the call is answered.</p> : null}
          <div class="plan-actions">
            {ACTIONS[plan.status].map(({ action, label }) => (
              <form method="post" action={`/chat/${conversationId}/plan/${action}`} hx-post={`/chat/${conversationId}/plan/${action}`} hx-target="#plan" hx-swap="innerHTML">
                <button type="submit" data-action={action}>
                  {label}
                </button>
              </form>
            ))}
          </div>
        </>
      ) : (
        <p class="muted">No plan. Ask the agent to make one for work in several steps.</p>
      )}
      <Alert text={problem} />
    </>
  )
}
