import { expect, test } from 'bun:test'
import { FRAME_RATE, FrameBudget, MAX_FRAMES_IN_FLIGHT, MAX_REFUSALS } from '../../src/admin/chat/frame-budget.ts'

test(`at most ${MAX_FRAMES_IN_FLIGHT} frames are handled at once; a message past that is refused and told, others told once a second`, () => {
  const budget = new FrameBudget(0)
  for (let i = 0; i < MAX_FRAMES_IN_FLIGHT; i++) expect(budget.admit(false, 0)).toBe('accepted')
  expect(budget.admit(true, 0)).toBe('refused')
  expect(budget.admit(true, 0)).toBe('refused')
  expect(budget.admit(false, 0)).toBe('refused-quietly')
  budget.done()
  expect(budget.admit(false, 0)).toBe('accepted')
  expect(budget.admit(false, 999)).toBe('refused-quietly')
  expect(budget.admit(false, 1_000)).toBe('refused')
})

test(`frames come at ${FRAME_RATE.perSecond} a second after a burst of ${FRAME_RATE.burst}`, () => {
  const budget = new FrameBudget(0)
  for (let i = 0; i < FRAME_RATE.burst; i++) {
    expect(budget.admit(false, 0)).toBe('accepted')
    budget.done()
  }
  expect(budget.admit(true, 0)).toBe('refused')
  expect(budget.admit(false, 1000 / FRAME_RATE.perSecond)).toBe('accepted')
  budget.done()
  expect(budget.admit(true, 1000 / FRAME_RATE.perSecond)).toBe('refused')
})

test(`${MAX_REFUSALS} refusals in a row close the socket; an accepted frame starts the count again`, () => {
  const budget = new FrameBudget(0)
  // Frames that never finish keep every place taken: all that follow are refused.
  for (let i = 0; i < MAX_FRAMES_IN_FLIGHT; i++) expect(budget.admit(false, 0)).toBe('accepted')
  for (let i = 0; i < MAX_REFUSALS - 1; i++) expect(budget.admit(false, 0)).not.toBe('close')
  budget.done()
  expect(budget.admit(false, 0)).toBe('accepted')
  for (let i = 0; i < MAX_REFUSALS; i++) expect(budget.admit(false, 0)).not.toBe('close')
  expect(budget.admit(false, 0)).toBe('close')
})
