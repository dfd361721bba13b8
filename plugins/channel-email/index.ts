import { definePlugin } from '../../src/plugin-host/sdk.ts'
import { emailDriver } from './outbound.ts'
import { MailboxPoller, pollInterval } from './poller.ts'

/**
 * Email as a channel: each agent's mailbox is read over IMAP and the kernel answers what arrives; the answers go
 * out over SMTP in the sender's thread. Who sent a mail is believed only as far as the mailbox's server vouches.
 */
export default definePlugin({
  setup(context) {
    context.channels.register(emailDriver(context.channels))
    const poller = new MailboxPoller(context.channels, context.log)
    // Runs again after every change of the settings: the interval is read afresh.
    context.onStartup(() => poller.start(pollInterval(context.settings.poll_seconds, context.log)))
  },
})
