import { expect, test } from 'bun:test'
import { switchedRunner } from '../../src/plugin-host/switched-runner.ts'
import type { Runner } from '../../src/runners/contract.ts'

const signal = new AbortController().signal
const speaking: Runner = {
  name: 'speaking',
  models: () => [],
  stream: async function* () {
    yield { type: 'done' }
  },
  transcribe: async () => ({ text: 'heard', cost_usd: 0 }),
  speak: async () => ({ audio: new Uint8Array([1]), cost_usd: 0 }),
}
const request = { audio: new Uint8Array(), mediaType: 'audio/ogg', filename: 'voice.ogg', model: 'm', durationMs: 0, signal }

test('a runner whose plugin is off refuses speech too, saying which plugin; switched on again, it speaks', async () => {
  let on = false
  const runner = switchedRunner(speaking, 'runner-speaking', () => on)
  await expect(runner.transcribe!(request)).rejects.toThrow('The runner "speaking" is switched off: its plugin runner-speaking is disabled.')
  await expect(runner.speak!({ text: "hi", model: "m", voice: "v", format: "opus", signal })).rejects.toThrow('switched off')
  on = true
  expect(await runner.transcribe!(request)).toEqual({ text: 'heard', cost_usd: 0 })
  expect((await runner.speak!({ text: 'hi', model: 'm', voice: 'v', format: 'opus', signal })).audio).toEqual(new Uint8Array([1]))
})

test('a runner without speech stays without it behind the switch, so the voice can say it offers none', () => {
  const { transcribe: _t, speak: _s, ...mute } = speaking
  const runner = switchedRunner(mute, 'runner-mute', () => true)
  expect(runner.transcribe).toBeUndefined()
  expect(runner.speak).toBeUndefined()
  expect(runner.name).toBe('speaking')
})
