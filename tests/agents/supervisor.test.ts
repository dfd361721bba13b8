import { expect, test } from 'bun:test'
import { AgentInstance } from '../../src/agents/supervisor.ts'
import { hasSettled } from '../helpers/until.ts'

test('an instance stops only once its running turns are done', async () => {
  const instance = new AgentInstance('agent', 1, new Date())
  const first = instance.lease()
  const second = instance.lease()
  expect(instance.turnsInFlight).toBe(2)
  const stopping = instance.stop()
  first()
  first() // releasing twice counts once
  expect(instance.turnsInFlight).toBe(1)
  expect(await hasSettled(stopping)).toBe(false)
  second()
  expect(instance.turnsInFlight).toBe(0)
  expect(await hasSettled(stopping)).toBe(true)
})

test('an idle instance stops at once', async () => {
  const instance = new AgentInstance('agent', 1, new Date())
  expect(instance.turnsInFlight).toBe(0)
  expect(await hasSettled(instance.stop())).toBe(true)
})

test('an instance whose turns have all ended stops at once, and every waiting stop is released together', async () => {
  const instance = new AgentInstance('agent', 1, new Date())
  const release = instance.lease()
  const waiting = [instance.stop(), instance.stop()]
  expect(await hasSettled(Promise.race(waiting))).toBe(false)
  release()
  expect(await hasSettled(Promise.all(waiting))).toBe(true)
  expect(await hasSettled(instance.stop())).toBe(true)
})
