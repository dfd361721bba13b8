import type { Authenticator } from '../auth/authenticator.ts'
import { ApiError } from '../errors.ts'
import type { Chat } from '../chat/chat.ts'
import type { Logger } from '../logger.ts'
import { MAX_CONTINUATIONS, type Plans } from './plans.ts'
import { currentTask, planText, type PlanView } from './view.ts'

/**
 * Auto-continuation: while a conversation's plan is active, each turn that ends with a whole answer is followed
 * by a continuation message to the agent, at most MAX_CONTINUATIONS per execution. The plan is re-read (and its
 * count taken) in the store once the next turn is admitted, so a pause made in any process stops the next
 * message; whichever process ends a turn or activates the plan sends it.
 */
export class PlanContinuation {
  #stopped = false
  readonly #waiting = new Map<Timer, () => void>()
  /** Every continuation waiting for its delay or under way, settled when it is done (or called off). */
  readonly #pending = new Set<Promise<void>>()

  constructor(
    private readonly plans: Plans,
    private readonly chat: Chat,
    private readonly authenticator: Authenticator,
    private readonly log: Logger,
    /** The breath between a turn and the next continuation, in which people can pause or speak first. */
    private readonly delayMs: number,
  ) {
    plans.onActivated((plan) => this.#next(plan.conversation_id))
    // A turn stopped or failed leaves the plan where it is: the person decides (a new message, pause and resume).
    chat.onTurnEnd((conversationId, outcome) => {
      if (outcome === 'complete') this.#next(conversationId)
    })
  }

  /** No continuation starts after this (the platform is stopping); resolves once those under way are done. */
  async stop(): Promise<void> {
    this.#stopped = true
    for (const [timer, callOff] of this.#waiting) {
      clearTimeout(timer)
      callOff()
    }
    this.#waiting.clear()
    await this.idle()
  }

  /**
   * Resolves once no continuation is waiting for its delay or under way: what follows a turn or a change of a
   * plan has happened, or was found to have nothing to do.
   */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending])
  }

  #next(conversationId: string): void {
    if (this.#stopped) return
    const { promise, resolve } = Promise.withResolvers<void>()
    const timer = setTimeout(() => {
      this.#waiting.delete(timer)
      if (this.#stopped) return resolve()
      this.#continue(conversationId)
        .catch((error) => this.log.error('plan continuation not sent', { conversation_id: conversationId, error: String(error) }))
        .finally(resolve)
    }, this.delayMs)
    this.#waiting.set(timer, resolve)
    this.#pending.add(promise)
    void promise.then(() => this.#pending.delete(promise))
  }

  async #continue(conversationId: string): Promise<void> {
    const plan = await this.plans.active(conversationId)
    if (!plan) return
    if (plan.continuations >= MAX_CONTINUATIONS) {
      await this.plans.halt(plan.id, `The plan "${plan.title}" was paused after ${MAX_CONTINUATIONS} continuation messages; resume it to let the agent go on.`)
      return
    }
    const actor = plan.driven_by ? await this.authenticator.memberActor(plan.driven_by, plan.company_id).catch(() => undefined) : undefined
    if (!actor) {
      await this.plans.halt(plan.id, `The plan "${plan.title}" was paused: whoever set it going is no longer a member here. Resume it to go on as yourself.`)
      return
    }
    await this.chat
      .continuePlan(actor, conversationId, async () => {
        const counted = this.#stopped ? undefined : await this.plans.countContinuation(plan.id)
        return counted && continuationMessage(counted)
      })
      .catch(async (error) => {
        // They may no longer see the conversation or its agent: left where it is, the plan would stay active for good.
        if (!(error instanceof ApiError) || (error.code !== 'not_found' && error.code !== 'forbidden')) throw error
        await this.plans.halt(plan.id, `The plan "${plan.title}" was paused: whoever set it going can no longer reach this conversation or its agent. Resume it to go on as yourself.`)
      })
  }
}

/** What the agent is told between tasks: where the plan stands and what to do next. */
export function continuationMessage(plan: PlanView): string {
  const task = currentTask(plan)
  const next = !task
    ? 'No task is pending or in progress: finish the plan with plan_task_update, or change it with plan_update.'
    : task.status === 'in_progress'
      ? `Carry on with task ${task.number} ("${task.title}"), then mark it completed or failed with plan_task_update.`
      : `Next is task ${task.number} ("${task.title}"): mark it in_progress with plan_task_update, do it, then mark it completed or failed.`
  return `Continue with the plan (continuation ${plan.continuations} of ${MAX_CONTINUATIONS}). ${next}\n\n${planText(plan)}`
}
