import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Actor } from '../../src/auth/actor.ts'
import type { Store } from '../../src/db/connect.ts'
import { AgentConfigRecord } from '../../src/models/agent-config.ts'
import { Company } from '../../src/models/company.ts'
import { User } from '../../src/models/user.ts'
import type { Model } from '../../src/models/define.ts'
import { parseListQuery } from '../../src/models/list-query.ts'
import { createRecord, deleteRecord, getRecord, getRecordFields, listRecords, patchRecord, replaceRecord } from '../../src/models/records.ts'
import { WebchatConversation, WebchatMessage } from '../../src/models/webchat.ts'
import type { WriteScope, Written } from '../../src/events/writes.ts'
import { freshStore } from '../helpers/database.ts'

let store: Store
let alice: Actor
let bob: Actor

async function seedTenant(slug: string): Promise<Actor> {
  const companyId = Bun.randomUUIDv7()
  const userId = Bun.randomUUIDv7()
  await store.db.insertInto('companies').values({ id: companyId, name: slug, slug }).execute()
  await store.db.insertInto('users').values({ id: userId, email: `${slug}@example.com`, username: slug, avatar: null, password_hash: null }).execute()
  await store.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: companyId, user_id: userId, role: 'owner' }).execute()
  return { userId, companyId, role: 'owner', isSuperadmin: false }
}

beforeAll(async () => {
  store = await freshStore()
  alice = await seedTenant('alice-co')
  bob = await seedTenant('bob-co')
})
afterAll(() => store.close())

const everything = (model: Model = AgentConfigRecord) => parseListQuery(model, {})

/** What the records layer announced, in order. */
const announced: Written[] = []

/** Writes straight on the store as `actor`, announcements kept in `announced`; no outbound address is reachable. */
function scope(actor: Actor): WriteScope {
  return {
    db: store.db,
    actor,
    announce: (write) => void announced.push(write),
    checkOutbound: async () => {
      throw new Error('no outbound addresses here')
    },
  }
}

describe('tenant isolation through the scoped query builder', () => {
  test('a record is created in the actor’s company and only that company sees it', async () => {
    const bobs = await createRecord(scope(bob), AgentConfigRecord, AgentConfigRecord.create.parse({ name: 'bob-agent' }))
    expect(bobs.record.company_id).toBe(bob.companyId!)
    const id = bobs.record.id as string

    expect((await listRecords(store.db, alice, AgentConfigRecord, everything())).data).toEqual([])
    expect((await listRecords(store.db, bob, AgentConfigRecord, everything())).data.map((r) => r.id)).toEqual([id])
    const counted = await listRecords(store.db, alice, AgentConfigRecord, { ...everything(), count: true })
    expect(counted.count).toBe(0)

    // Reads, writes and deletes of another tenant's record answer 404, exactly like a missing record.
    for (const attempt of [
      () => getRecord(store.db, alice, AgentConfigRecord, id),
      () => replaceRecord(scope(alice), AgentConfigRecord, id, AgentConfigRecord.create.parse({ name: 'hijacked' })),
      () => patchRecord(scope(alice), AgentConfigRecord, id, { name: 'hijacked' }),
      () => deleteRecord(scope(alice), AgentConfigRecord, id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'not_found' })
    }
    expect((await getRecord(store.db, bob, AgentConfigRecord, id)).record.name).toBe('bob-agent')
  })

  test('a record cannot point at another tenant’s record, even by its id', async () => {
    const bobsConversation = await createRecord(scope(bob), WebchatConversation, WebchatConversation.create.parse({ title: 'private' }))
    await expect(
      createRecord(scope(alice), WebchatMessage, WebchatMessage.create.parse({ conversation_id: bobsConversation.record.id, text: 'peek' })),
    ).rejects.toMatchObject({ code: 'validation_error', options: { errors: [{ path: 'conversation_id', message: 'no such record' }] } })
    const bobsAgent = await createRecord(scope(bob), AgentConfigRecord, AgentConfigRecord.create.parse({ name: 'bob-2' }))
    await expect(
      createRecord(scope(alice), WebchatConversation, WebchatConversation.create.parse({ agent_id: bobsAgent.record.id })),
    ).rejects.toMatchObject({ code: '23503' })
    // Below the API the store itself refuses the mix: the foreign keys carry the company.
    await expect(
      store.db
        .insertInto('webchat_messages')
        .values({ id: Bun.randomUUIDv7(), company_id: alice.companyId!, conversation_id: bobsConversation.record.id as string, role: 'user', text: 'x', sender_id: null, agent_id: null, attachments: '[]' })
        .execute(),
    ).rejects.toMatchObject({ code: '23503' })
  })

  test('some fields of a record are read as the whole one is, in the actor’s company only, and never a field no response shows', async () => {
    const { record } = await createRecord(scope(bob), AgentConfigRecord, AgentConfigRecord.create.parse({ name: 'fielded' }))
    const id = record.id as string
    expect(await getRecordFields(store.db, bob, AgentConfigRecord, id, ['name', 'enabled'])).toEqual({ name: 'fielded', enabled: true })
    await expect(getRecordFields(store.db, alice, AgentConfigRecord, id, ['name'])).rejects.toMatchObject({ code: 'not_found' })
    await expect(getRecordFields(store.db, bob, User, bob.userId, ['username', 'password_hash'])).rejects.toThrow('User shows no field password_hash')
  })

  test('companies: members see their own, a superadmin sees all', async () => {
    const mine = await listRecords(store.db, alice, Company, everything(Company))
    expect(mine.data.map((c) => c.slug)).toEqual(['alice-co'])
    const all = await listRecords(store.db, { ...alice, isSuperadmin: true }, Company, everything(Company))
    expect(all.data.map((c) => c.slug).sort()).toEqual(['alice-co', 'bob-co'])
    await expect(getRecord(store.db, alice, Company, bob.companyId!)).rejects.toMatchObject({ code: 'not_found' })
  })
})

describe('every write says what it did', () => {
  test('create, update, patch and delete each announce the record once; a refused write announces nothing', async () => {
    announced.length = 0
    const { record } = await createRecord(scope(bob), AgentConfigRecord, AgentConfigRecord.create.parse({ name: 'told' }))
    const id = record.id as string
    await replaceRecord(scope(bob), AgentConfigRecord, id, AgentConfigRecord.create.parse({ name: 'told-2' }))
    await patchRecord(scope(bob), AgentConfigRecord, id, { description: 'patched' })
    await expect(patchRecord(scope(alice), AgentConfigRecord, id, { name: 'hijacked' })).rejects.toMatchObject({ code: 'not_found' })
    await expect(patchRecord(scope(bob), AgentConfigRecord, id, { name: '' })).rejects.toMatchObject({ code: 'validation_error' })
    await deleteRecord(scope(bob), AgentConfigRecord, id)
    expect(announced.map((w) => w.type === 'record' && [w.model.name, w.verb, w.id, w.record.name, w.record.description, w.actor.userId])).toEqual([
      ['AgentConfigRecord', 'create', id, 'told', '', bob.userId],
      ['AgentConfigRecord', 'update', id, 'told-2', '', bob.userId],
      ['AgentConfigRecord', 'update', id, 'told-2', 'patched', bob.userId],
      // A delete tells the record as it was.
      ['AgentConfigRecord', 'delete', id, 'told-2', 'patched', bob.userId],
    ])
  })
})
