import { expect, test } from 'bun:test'
import { AgentInstance } from '../../src/agents/supervisor.ts'

test('an instance stops only once its running turns are done', async () => {
  const instance = new AgentInstance('agent', 1, new Date())
  const first = instance.lease()
  const second = instance.lease()
  let stopped = false
  const stopping = instance.stop().then(() => {
    stopped = true
  })
  first()
  first() // releasing twice counts once
  await Bun.sleep(5)
  expect(stopped).toBe(false)
  expect(instance.turnsInFlight).toBe(1)
  second()
  await stopping
  expect(stopped).toBe(true)
})

test('an idle instance stops at once', async () => {
  await new AgentInstance('agent', 1, new Date()).stop()
})
