import { expect, test } from 'bun:test'
import { documentContext } from '../../src/documents/context.ts'
import { TXT } from '../../src/documents/media-types.ts'
import { insertDocument } from '../../src/documents/store.ts'
import { CONTEXT_TEXT_CAP } from '../../src/documents/text-cap.ts'
import { usePlatform } from '../helpers/platform.ts'

const p = usePlatform()

async function conversation(): Promise<string> {
  return (await p().call('POST', '/api/v1/WebchatConversation', { json: { title: 'Documents' } })).body.id
}

function attach(conversationId: string, filename: string, text: string, truncated = false) {
  const root = p().root
  return insertDocument(p().store.db, {
    companyId: root.companyId!,
    conversationId,
    uploadedBy: root.userId,
    filename,
    mediaType: TXT,
    sizeBytes: Buffer.byteLength(text),
    extractedText: text,
    truncated,
  })
}

test('no documents, no context', async () => {
  expect(await documentContext(p().store.db, await conversation())).toEqual({ text: '', truncated: false })
})

test('each document under a header with its filename, oldest first, and only this conversation’s', async () => {
  const id = await conversation()
  await attach(id, 'minutes.txt', 'The board met on Monday.')
  await attach(id, 'budget.csv', 'item\tcost\ncoffee\t42')
  await attach(await conversation(), 'elsewhere.txt', 'Not in this conversation.')
  const context = await documentContext(p().store.db, id)
  expect(context).toEqual({
    text: '=== Document: minutes.txt ===\nThe board met on Monday.\n\n=== Document: budget.csv ===\nitem\tcost\ncoffee\t42',
    truncated: false,
  })
})

test('over 100 KB in all, the text is cut there and tells the model; the notice tells the user', async () => {
  const id = await conversation()
  await attach(id, 'first.txt', 'α'.repeat(40 * 1024)) // 80 KB of two-byte characters
  await attach(id, 'second.txt', 'β'.repeat(40 * 1024))
  const context = await documentContext(p().store.db, id)
  expect(context.truncated).toBe(true)
  expect(Buffer.byteLength(context.text)).toBeLessThanOrEqual(CONTEXT_TEXT_CAP)
  expect(context.text).toStartWith('=== Document: first.txt ===\nααα')
  expect(context.text).toContain('=== Document: second.txt ===\nβββ')
  expect(context.text).toEndWith('\n\n[Document text truncated: only the first 100 KB of the attached documents is included.]')
  expect(context.text).not.toContain('\ufffd')
  expect(context.notice).toBe('The attached documents hold more text than the agent can be given: it sees only the first 100 KB.')
})

test('a document already cut at upload is marked for the model and named to the user, even under 100 KB', async () => {
  const id = await conversation()
  await attach(id, 'report.txt', 'The start of a long report.', true)
  await attach(id, 'note.txt', 'A short note.')
  const context = await documentContext(p().store.db, id)
  expect(context.truncated).toBe(true)
  expect(context.text).toBe(
    '=== Document: report.txt ===\nThe start of a long report.\n' +
      '[Document text truncated: only the first 200 KB of the text of report.txt was kept when it was uploaded.]\n\n' +
      '=== Document: note.txt ===\nA short note.',
  )
  expect(context.notice).toBe('Only the first 200 KB of text of report.txt was kept when uploaded.')
})

test('documents of 200 KB each: the store sends no more than the context can hold, and both caps are told', async () => {
  const id = await conversation()
  for (const name of ['a.txt', 'b.txt', 'c.txt']) await attach(id, name, 'x'.repeat(200 * 1024), true)
  const context = await documentContext(p().store.db, id)
  expect(Buffer.byteLength(context.text)).toBeLessThanOrEqual(CONTEXT_TEXT_CAP)
  expect(context.text).not.toContain('b.txt ===')
  expect(context.notice).toBe(
    'The attached documents hold more text than the agent can be given: it sees only the first 100 KB. ' +
      'Only the first 200 KB of text of a.txt, b.txt, c.txt were kept when uploaded.',
  )
})
