import { describe, expect, test } from 'bun:test'
import { AgentInstance } from '../../src/agents/supervisor.ts'
import { startTestPlatform, useStarted } from '../helpers/platform.ts'
import { hasSettled, until } from '../helpers/until.ts'

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

describe('a live agent follows its configuration', () => {
  const platformOf = useStarted(() => startTestPlatform())
  const generationOf = async (id: string) => {
    const live = await platformOf().call('GET', '/api/agents')
    return (live.body.data as Array<{ agent_id: string; generation: number }>).find((a) => a.agent_id === id)?.generation
  }

  test('a change of its channels reloads it (ON_STARTUP registers webhooks); any other change does not', async () => {
    const p = platformOf()
    const made = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'follower', channels: { webchat: { enabled: true } } } })
    expect(made.status).toBe(201)
    const id = made.body.id as string
    await until(async () => (await generationOf(id)) !== undefined, { what: 'the agent to run' })
    const started = await generationOf(id)

    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { json: { description: 'Answers.' } })).status).toBe(200)
    expect(await generationOf(id)).toBe(started)

    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { json: { channels: { email: {} } } })).status).toBe(200)
    // The save waited for the reload: the new instance is in place when it answers.
    const reloaded = await generationOf(id)
    expect(reloaded).toBeGreaterThan(started!)

    // The same channels again, keys in another order: no change, no reload.
    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { json: { channels: { email: { unknown_senders: 'invite', enabled: true } } } })).status).toBe(200)
    expect(await generationOf(id)).toBe(reloaded)
  })
})
