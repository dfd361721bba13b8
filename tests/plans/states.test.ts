import { expect, test } from 'bun:test'
import type { PlanStatus, PlanTaskStatus } from '../../src/db/schema.ts'
import { PLAN_ACTIONS, planAction, refusedTaskMove, settledStatus } from '../../src/plans/states.ts'

const TASK_STATES: PlanTaskStatus[] = ['pending', 'in_progress', 'completed', 'failed', 'skipped']
const PLAN_STATES: PlanStatus[] = ['draft', 'active', 'paused', 'completed', 'cancelled']

test('tasks move only along DESIGN’s transitions; every other move is refused with a reason', () => {
  const allowed = new Set(['pending>in_progress', 'pending>skipped', 'in_progress>completed', 'in_progress>failed', 'in_progress>skipped', 'failed>pending'])
  for (const from of TASK_STATES) {
    for (const to of TASK_STATES) {
      const refused = refusedTaskMove(from, to)
      if (allowed.has(`${from}>${to}`)) expect(refused).toBeUndefined()
      else expect(refused).toMatch(/\w+/)
    }
  }
  expect(refusedTaskMove('pending', 'completed')).toBe('A pending task cannot be marked completed: set it in_progress first, then completed (skipping a step is not allowed).')
  expect(refusedTaskMove('completed', 'pending')).toBe('The task is completed, which is final: it cannot become pending.')
})

test('plan actions: execute a draft, pause and resume, cancel anything live; final plans take none', () => {
  const table = Object.fromEntries(PLAN_STATES.map((s) => [s, Object.fromEntries(PLAN_ACTIONS.map((a) => [a, ((r) => ('to' in r ? r.to : '-'))(planAction(s, a))]))]))
  expect(table).toEqual({
    draft: { execute: 'active', pause: '-', resume: '-', cancel: 'cancelled' },
    active: { execute: '-', pause: 'paused', resume: '-', cancel: 'cancelled' },
    paused: { execute: '-', pause: '-', resume: 'active', cancel: 'cancelled' },
    completed: { execute: '-', pause: '-', resume: '-', cancel: '-' },
    cancelled: { execute: '-', pause: '-', resume: '-', cancel: '-' },
  })
  expect(planAction('paused', 'execute')).toEqual({ refused: 'Only a draft plan can be executed; this one is paused. Resume it instead.' })
})

test('a failed task pauses an active plan; all done (completed or skipped) completes it', () => {
  const tasks = (...states: PlanTaskStatus[]) => states.map((status) => ({ status }))
  expect(settledStatus('active', tasks('completed', 'failed', 'pending'))).toBe('paused')
  expect(settledStatus('active', tasks('completed', 'skipped'))).toBe('completed')
  expect(settledStatus('paused', tasks('completed', 'skipped'))).toBe('completed')
  expect(settledStatus('active', tasks('completed', 'in_progress'))).toBeUndefined()
  expect(settledStatus('draft', tasks('completed'))).toBeUndefined()
  expect(settledStatus('active', [])).toBeUndefined()
})
