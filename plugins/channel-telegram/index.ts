import { definePlugin } from '../../src/plugin-host/sdk.ts'
import { telegramDriver } from './driver.ts'
import { registerWebhooks } from './registration.ts'
import { serveWebhook } from './webhook.ts'

/**
 * Agents on Telegram: each agent's bot delivers to POST /channels/telegram/{agent_id} (registered at start-up), and
 * answers go out through the Bot API. Who may talk, conversations, splitting and retries are the kernel's.
 */
export default definePlugin({
  setup(context) {
    context.channels.register(telegramDriver(context))
    serveWebhook(context)
    context.onStartup(() => registerWebhooks(context))
  },
})
