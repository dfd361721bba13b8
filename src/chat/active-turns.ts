import { ApiError } from '../errors.ts'

/**
 * The turns running in this process, by conversation: one at a time per conversation, and the handle that
 * aborts one. (With several processes a turn is owned by one of them; reaching it from another comes with the
 * shared event bus.)
 */
export class ActiveTurns {
  readonly #turns = new Map<string, AbortController>()

  start(conversationId: string): AbortController {
    if (this.#turns.has(conversationId)) {
      throw new ApiError('conflict', 'A turn is already running in this conversation; wait for it or abort it.')
    }
    const controller = new AbortController()
    this.#turns.set(conversationId, controller)
    return controller
  }

  finish(conversationId: string, controller: AbortController): void {
    if (this.#turns.get(conversationId) === controller) this.#turns.delete(conversationId)
  }

  /** True when a running turn was told to stop. */
  abort(conversationId: string): boolean {
    const controller = this.#turns.get(conversationId)
    if (!controller) return false
    controller.abort(new Error('aborted by the user'))
    return true
  }
}
