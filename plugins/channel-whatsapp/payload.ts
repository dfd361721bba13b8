import { z, type InboundMessage } from '../../src/plugin-host/sdk.ts'

/*
 * What Meta POSTs to the webhook. Only what this plugin reads is required; Meta adds fields over time, and other
 * subscribed fields (account updates, template reviews) arrive in the same shape with a different `field`.
 */

const Message = z
  .object({
    from: z.string().openapi({ description: 'The sender’s WhatsApp id (wa_id): their number, digits only.', example: '16505551234' }),
    id: z.string().openapi({ description: 'The message id (wamid).', example: 'wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTdBNjg0' }),
    timestamp: z.string().optional(),
    type: z.string().openapi({ description: 'text, audio, image, document, …; text and audio (a voice note) are answered.', example: 'text' }),
    text: z.object({ body: z.string() }).optional(),
    audio: z
      .object({ id: z.string().openapi({ description: 'The media id: GET /{id} names where to download it.' }), mime_type: z.string().optional(), voice: z.boolean().optional() })
      .optional(),
  })
  .openapi('WhatsAppMessage')

const Contact = z.object({ wa_id: z.string(), profile: z.object({ name: z.string().optional() }).optional() })

const ChangeValue = z
  .object({
    messaging_product: z.string().optional(),
    metadata: z.object({ display_phone_number: z.string().optional(), phone_number_id: z.string() }).optional(),
    contacts: z.array(Contact).optional(),
    messages: z.array(Message).optional(),
    statuses: z.array(z.unknown()).optional().openapi({ description: 'Delivery and read receipts of sent messages: acknowledged, not acted on.' }),
  })
  .openapi('WhatsAppChangeValue')

export const Notification = z
  .object({
    object: z.literal('whatsapp_business_account'),
    entry: z.array(
      z.object({
        id: z.string().openapi({ description: 'The WhatsApp Business Account id.' }),
        changes: z.array(z.object({ field: z.string().openapi({ example: 'messages' }), value: ChangeValue })),
      }),
    ),
  })
  .openapi('WhatsAppNotification', { description: 'A webhook notification of the WhatsApp Cloud API, signed with the app secret.' })
export type Notification = z.infer<typeof Notification>

/** A message to answer, and the id of the audio it carried (a voice note), to download before it is kept. */
export interface ReadMessage {
  message: InboundMessage
  audioId?: string
}

/**
 * The text and audio messages of a notification sent to this agent's business number. A webhook of one Meta app
 * hears every number of the app, so changes addressed to another number are not this agent's.
 */
export function inboundMessages(notification: Notification, phoneNumberId: string): ReadMessage[] {
  const found: ReadMessage[] = []
  for (const entry of notification.entry) {
    for (const { field, value } of entry.changes) {
      if (field !== 'messages' || value.metadata?.phone_number_id !== phoneNumberId) continue
      for (const message of value.messages ?? []) {
        const text = message.type === 'text' ? message.text?.body : undefined
        const audioId = message.type === 'audio' ? message.audio?.id : undefined
        if (!text && !audioId) continue
        const name = value.contacts?.find((contact) => contact.wa_id === message.from)?.profile?.name
        found.push({
          message: {
            deliveryId: message.id,
            sender: { id: message.from, ...(name ? { displayName: name } : {}) },
            // A WhatsApp chat is one person and the number: the sender is the thread, and typing needs the last message.
            thread: { key: message.from, target: { to: message.from, message_id: message.id } },
            text: text ?? '',
          },
          ...(audioId ? { audioId } : {}),
        })
      }
    }
  }
  return found
}
