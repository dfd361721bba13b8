import { sql } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Executor } from '../db/schema.ts'
import { scoped } from '../db/scoped.ts'
import { getRecord } from '../models/records.ts'
import { WebchatConversation, WebchatMessage } from '../models/webchat.ts'

export type ExportFormat = 'markdown' | 'json'

interface ExportedMessage {
  id: string
  role: string
  status: string
  sender_name: string | null
  text: string
  attachments: unknown[]
  created_at: string
}

/** The whole conversation, for a participant (anyone else gets a 404), as a file to keep. */
export async function exportConversation(db: Executor, actor: Actor, id: string, format: ExportFormat): Promise<{ filename: string; body: string }> {
  const { record: conversation } = await getRecord(db, actor, WebchatConversation, id)
  const rows = await scoped(db, actor)
    .selectFrom(WebchatMessage)
    .leftJoin('users as u', 'u.id', 'webchat_messages.sender_id')
    .leftJoin('agent_configs as a', 'a.id', 'webchat_messages.agent_id')
    .select([
      'webchat_messages.id',
      'webchat_messages.role',
      'webchat_messages.status',
      'webchat_messages.text',
      'webchat_messages.attachments',
      'webchat_messages.created_at',
      sql<string | null>`coalesce(nullif(u.display_name, ''), u.username, a.name)`.as('sender_name'),
    ])
    .where('webchat_messages.conversation_id', '=', conversation.id)
    .orderBy('webchat_messages.id')
    .execute()
  const messages: ExportedMessage[] = rows.map((row) => ({ ...row, attachments: row.attachments as unknown[], created_at: new Date(row.created_at).toISOString() }))
  const agent = conversation.agent_id ? await db.selectFrom('agent_configs').select('name').where('id', '=', conversation.agent_id).executeTakeFirst() : undefined
  const title = conversation.title || 'Untitled conversation'
  const stem = fileStem(title)
  if (format === 'json') {
    const about = { id: conversation.id, title: conversation.title, agent_id: conversation.agent_id, agent_name: agent?.name ?? null, created_at: conversation.created_at }
    return { filename: `${stem}.json`, body: JSON.stringify({ conversation: about, messages }, null, 2) }
  }
  return { filename: `${stem}.md`, body: markdownOf(title, agent?.name, messages) }
}

function markdownOf(title: string, agent: string | undefined, messages: ExportedMessage[]): string {
  const parts = [`# ${oneLine(title)}`, agent ? `A conversation with ${oneLine(agent)}.` : 'A conversation with an agent that has since been removed.']
  for (const m of messages) {
    const who = m.role === 'system' ? 'Notice' : oneLine(m.sender_name ?? (m.role === 'agent' ? 'Agent' : 'Someone'))
    parts.push('---', `**${who}** · ${m.created_at}`, m.text)
    const names = m.attachments.map((a) => (a as { name?: string }).name).filter(Boolean)
    if (names.length) parts.push(`*Attached: ${names.map((n) => oneLine(n!)).join(', ')}*`)
    if (m.status === 'aborted') parts.push('*Stopped before the end.*')
    if (m.status === 'error') parts.push('*The answer failed.*')
  }
  return `${parts.join('\n\n')}\n`
}

/** Headings and names stay on their line, whatever they hold. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** A file name from the title: letters, digits and dashes of ASCII, so that every browser and shell takes it. */
function fileStem(title: string): string {
  const ascii = title
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '')
  return ascii || 'conversation'
}
