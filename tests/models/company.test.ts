import { expect, test } from 'bun:test'
import { usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const p = usePlatform()
const unique = () => crypto.randomUUID().slice(0, 8)
const membersOf = (companyId: string) => p().store.db.selectFrom('company_users').select(['user_id', 'role']).where('company_id', '=', companyId).execute()

test('a company made with an owner has that owner from the start, in the same write', async () => {
  const ada = await p().createUser({ companyId: null })
  const made = await p().call('POST', '/api/v1/Company', { json: { name: 'Owned', slug: `owned-${unique()}`, owner_id: ada.userId } })
  expect(made.status).toBe(201)
  // Write-only: said once, kept as the membership, never read back as a field.
  expect('owner_id' in made.body).toBe(false)
  expect(await membersOf(made.body.id)).toEqual([{ user_id: ada.userId, role: 'owner' }])
  // The owner works there as one: they may rename it.
  const renamed = await p().call('PATCH', `/api/v1/Company/${made.body.id}`, { json: { name: 'Owned by Ada' }, as: { ...ada, companyId: made.body.id } })
  expect(renamed.status).toBe(200)
})

test('without an owner a company is made as before; an owner who does not exist makes nothing', async () => {
  const plain = await p().call('POST', '/api/v1/Company', { json: { name: 'Plain', slug: `plain-${unique()}` } })
  expect(plain.status).toBe(201)
  expect(await membersOf(plain.body.id)).toEqual([])

  const slug = `ghost-${unique()}`
  const ghost = expectProblem(await p().call('POST', '/api/v1/Company', { json: { name: 'Ghost', slug, owner_id: crypto.randomUUID() } }), 422, 'validation_error')
  expect(ghost.errors).toContainEqual(expect.objectContaining({ path: 'owner_id' }))
  expect((await p().call('GET', `/api/v1/Company?slug=eq.${slug}`)).body.data).toEqual([])
  expectProblem(await p().call('POST', '/api/v1/Company', { json: { name: 'Bad', slug: `bad-${unique()}`, owner_id: 'not-a-uuid' } }), 422, 'validation_error')
})

test('the owner is chosen only when the company is made: a later owner_id is refused, not ignored', async () => {
  const made = await p().call('POST', '/api/v1/Company', { json: { name: 'Later', slug: `later-${unique()}` } })
  const someone = await p().createUser({ companyId: null })
  const refused = expectProblem(await p().call('PATCH', `/api/v1/Company/${made.body.id}`, { json: { owner_id: someone.userId } }), 422, 'validation_error')
  expect(refused.errors).toContainEqual(expect.objectContaining({ path: 'owner_id' }))
  expect(await membersOf(made.body.id)).toEqual([])
})

test('only a superadmin makes a company, owner or not', async () => {
  const admin = await p().createUser({ role: 'admin' })
  expectProblem(await p().call('POST', '/api/v1/Company', { json: { name: 'Mine', slug: `mine-${unique()}`, owner_id: admin.userId }, as: admin }), 403, 'forbidden')
})
