import { definePlugin, DeviceSignIn, openAICompatibleRunner, readProviderSettings, systemClock } from '../../src/plugin-host/sdk.ts'

/** OpenAI's list prices for speech (US$), as published in 2026; `audio_prices` overrides them model by model. */
const OPENAI_AUDIO_PRICES = 'whisper-1=0.006/min,gpt-4o-transcribe=0.006/min,gpt-4o-mini-transcribe=0.003/min,tts-1=15/Mchar,tts-1-hd=30/Mchar,gpt-4o-mini-tts=0.015/min'

export default definePlugin({
  setup(context) {
    const settings = readProviderSettings(context.settings, { baseUrl: 'https://api.openai.com/v1', models: 'gpt-4o-mini', speech: true, audioPrices: OPENAI_AUDIO_PRICES }, () => context.secret('api_key'))
    // A provider that signs its users in with OAuth's device grant: the tokens are this plugin's secrets in the vault.
    const device = settings.device && new DeviceSignIn(settings.device, { read: (key) => context.secret(key), write: (key, value) => context.keepSecret(key, value) }, systemClock)
    context.registerRunner(openAICompatibleRunner('openai', settings, device))
  },
})
