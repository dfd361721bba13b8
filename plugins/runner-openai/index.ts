import { definePlugin, DeviceSignIn, openAICompatibleRunner, readProviderSettings, systemClock } from '../../src/plugin-host/sdk.ts'

export default definePlugin({
  setup(context) {
    const settings = readProviderSettings(context.settings, { baseUrl: 'https://api.openai.com/v1', models: 'gpt-4o-mini' }, () => context.secret('api_key'))
    // A provider that signs its users in with OAuth's device grant: the tokens are this plugin's secrets in the vault.
    const device = settings.device && new DeviceSignIn(settings.device, { read: (key) => context.secret(key), write: (key, value) => context.keepSecret(key, value) }, systemClock)
    context.registerRunner(openAICompatibleRunner('openai', settings, device))
  },
})
