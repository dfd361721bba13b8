import { definePlugin, openAICompatibleRunner, readProviderSettings } from '../../src/plugin-host/sdk.ts'

/** Why backend=cli cannot be a runner: both reasons, so whoever set it knows what to change. */
export const CLI_REFUSED =
  'backend=cli is refused, for two reasons. ' +
  '(1) The Kimi CLI has none of the flags the runner contract needs (input format, config file, MCP config, working directory), ' +
  'so the model, the timeout and the context cannot be passed per invocation. ' +
  '(2) It runs tools itself, outside the MCP gateway, so per-user permissions and the vault would be bypassed. ' +
  'Set SWITCHBOARD_PLUGIN_RUNNER_KIMI_BACKEND=api.'

export default definePlugin({
  setup(context) {
    const backend = context.settings.backend ?? 'api'
    if (backend === 'cli') throw new Error(CLI_REFUSED)
    if (backend !== 'api') throw new Error(`backend=${backend} is not a backend; use api.`)
    const settings = readProviderSettings(context.settings, { baseUrl: 'https://api.moonshot.ai/v1', models: 'kimi-latest' }, () => context.secret('api_key'))
    context.registerRunner(openAICompatibleRunner('kimi', settings))
  },
})
