import { expect, test } from 'bun:test'
import { audioCost, audioPriceList, readProviderSettings } from '../../src/runners/provider-settings.ts'

test('audio prices are per minute of sound or per million characters; the operator’s win model by model', () => {
  const settings = readProviderSettings({ audio_prices: 'whisper-1=0.01/min, my-tts=20/Mchar' }, { baseUrl: 'http://x', models: 'm', audioPrices: 'whisper-1=0.006/min,tts-1=15/Mchar' }, async () => undefined)
  expect(settings.audioPrices.get('whisper-1')).toEqual({ usd: 0.01, per: 'min' })
  expect(settings.audioPrices.get('tts-1')).toEqual({ usd: 15, per: 'Mchar' })
  expect(audioCost(settings.audioPrices, 'whisper-1', { ms: 90_000 })).toBeCloseTo(0.015, 10)
  expect(audioCost(settings.audioPrices, 'my-tts', { ms: 5_000, chars: 1_000 })).toBeCloseTo(0.02, 10)
  expect(audioCost(settings.audioPrices, 'unknown', { ms: 60_000, chars: 1_000 })).toBe(0)
})

test.each(['whisper-1=0.006', 'whisper-1=cheap/min', '=1/min', 'tts-1=15/Kchar'])('%s is refused, naming the entry', (entry) => {
  expect(() => audioPriceList(entry)).toThrow(`audio_prices: "${entry}" is not model=usd/min or model=usd/Mchar`)
})

test('speech is offered as the plugin says unless the setting says otherwise', () => {
  const read = (raw: Record<string, string>, speech?: boolean) => readProviderSettings(raw, { baseUrl: 'http://x', models: 'm', ...(speech === undefined ? {} : { speech }) }, async () => undefined).speech
  expect(read({})).toBe(false)
  expect(read({}, true)).toBe(true)
  expect(read({ speech: 'false' }, true)).toBe(false)
  expect(read({ speech: 'true' })).toBe(true)
})
