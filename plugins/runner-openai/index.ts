import { definePlugin, openAICompatibleRunner, readProviderSettings } from '../../src/plugin-host/sdk.ts'

export default definePlugin({
  setup(context) {
    const settings = readProviderSettings(context.settings, { baseUrl: 'https://api.openai.com/v1', models: 'gpt-4o-mini' }, () => context.secret('api_key'))
    context.registerRunner(openAICompatibleRunner('openai', settings))
  },
})
