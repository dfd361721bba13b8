import { expect, test } from 'bun:test'
import { sql } from 'kysely'
import { expiredSessionEnd, history, insertMessage } from '../../src/chat/messages.ts'
import { usePlatform } from '../helpers/platform.ts'

const p = usePlatform()

test('a stale session ends at its last message, and history after it leaves the old turns out', async () => {
  const conversation = (await p().call('POST', '/api/v1/WebchatConversation', { json: { title: 't' } })).body.id
  const base = { company_id: p().root.companyId!, conversation_id: conversation, agent_id: null }
  const say = (role: 'user' | 'agent', text: string, status: 'complete' | 'aborted' = 'complete') =>
    insertMessage(p().store.db, { ...base, sender_id: role === 'user' ? p().root.userId : null, role, text, status })
  await say('user', 'old question')
  const lastOld = await say('agent', 'old answer')
  expect(await expiredSessionEnd(p().store.db, conversation, 10)).toBeUndefined()
  await p().store.db.updateTable('webchat_messages').set({ created_at: sql`created_at - interval '11 minutes'` }).where('conversation_id', '=', conversation).execute()
  expect(await expiredSessionEnd(p().store.db, conversation, 10)).toBe(lastOld)
  await say('user', 'new question')
  await say('agent', 'half an answer', 'aborted')
  expect(await history(p().store.db, conversation)).toEqual([
    { role: 'user', content: 'old question' },
    { role: 'assistant', content: 'old answer' },
    { role: 'user', content: 'new question' },
  ])
  expect(await history(p().store.db, conversation, { afterId: lastOld })).toEqual([{ role: 'user', content: 'new question' }])
  expect(await history(p().store.db, conversation, { beforeId: lastOld })).toEqual([{ role: 'user', content: 'old question' }])
})
