import { definePlugin } from '../../src/plugin-host/sdk.ts'
import { whatsappDriver } from './driver.ts'
import { mountWebhook } from './webhook.ts'

/**
 * WhatsApp through Meta's Cloud API: Meta delivers messages to the webhook, the kernel stores and answers them,
 * and the driver sends the answers back through the Graph API.
 */
export default definePlugin({
  setup(context) {
    context.channels.register(whatsappDriver(context.settings))
    mountWebhook(context)
  },
})
