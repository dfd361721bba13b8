import { definePlugin } from '../../src/plugin-host/sdk.ts'
import { openAICompatibleRunner, readSettings } from './runner.ts'

export default definePlugin({
  setup(context) {
    const settings = readSettings(context.settings, { baseUrl: 'https://api.openai.com/v1', models: 'gpt-4o-mini' }, () => context.secret('api_key'))
    context.registerRunner(openAICompatibleRunner('openai', settings))
  },
})
