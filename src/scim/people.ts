import { sql } from 'kysely'
import { endAccess } from '../auth/passwords.ts'
import type { CompanyRole, Executor, Row } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { Announcing } from '../events/writes.ts'
import { meets, parseFilter } from './filter.ts'
import { aboveToken, syncGroupRoles } from './roles.ts'

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
/** The most one page lists, whatever `count` asks. */
export const MAX_COUNT = 200

const USER_FILTERS = ['username', 'externalid', 'emails.value', 'emails', 'active', 'displayname', 'id']
const GROUP_FILTERS = ['displayname', 'externalid', 'id', 'members.value']

type UserRow = Pick<Row<'users'>, 'id' | 'username' | 'email' | 'display_name' | 'external_id' | 'deactivated_at' | 'created_at' | 'updated_at' | 'version'>

/** The company a SCIM token provisions, and where its resources are addressed. */
export interface ScimScope {
  companyId: string
  /** The /scim/v2 root, for the resources' meta.location. */
  base: string
  /** The role of whoever made the token: nobody above it is changed, and no role above it is given. */
  role: CompanyRole | 'superadmin'
}

const notFound = (what: string) => new ApiError('not_found', `No ${what} with this id in the company.`)
const invalid = (path: string, message: string) => new ApiError('validation_error', message, { errors: [{ path, message }] })

const isoOf = (date: Date) => new Date(date).toISOString()

export function scimUser(scope: ScimScope, user: UserRow, groups: Array<{ id: string; display_name: string }>) {
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.external_id ? { externalId: user.external_id } : {}),
    userName: user.username,
    displayName: user.display_name,
    name: { formatted: user.display_name },
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.deactivated_at === null,
    groups: groups.map((g) => ({ value: g.id, display: g.display_name, $ref: `${scope.base}/Groups/${g.id}` })),
    meta: { resourceType: 'User', created: isoOf(user.created_at), lastModified: isoOf(user.updated_at), location: `${scope.base}/Users/${user.id}`, version: `W/"${user.version}"` },
  }
}

function usersOfCompany(db: Executor, companyId: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('company_users as m', 'm.user_id', 'u.id')
    .select(['u.id', 'u.username', 'u.email', 'u.display_name', 'u.external_id', 'u.deactivated_at', 'u.created_at', 'u.updated_at', 'u.version'])
    .where('m.company_id', '=', companyId)
}

async function groupsOf(db: Executor, companyId: string, userIds: string[]) {
  if (userIds.length === 0) return []
  return db
    .selectFrom('scim_group_members as m')
    .innerJoin('scim_groups as g', 'g.id', 'm.group_id')
    .select(['m.user_id', 'g.id', 'g.display_name'])
    .where('g.company_id', '=', companyId)
    .where('m.user_id', 'in', userIds)
    .orderBy('g.display_name')
    .execute()
}

/** One page of a list, as RFC 7644 §3.4.2.4 counts it: startIndex from 1, count at most MAX_COUNT. */
export function pageOf<T>(all: T[], startIndex: number | undefined, count: number | undefined) {
  const start = Math.max(1, startIndex ?? 1)
  const size = Math.min(MAX_COUNT, Math.max(0, count ?? 100))
  const resources = all.slice(start - 1, start - 1 + size)
  return { schemas: [LIST_SCHEMA], totalResults: all.length, startIndex: start, itemsPerPage: resources.length, Resources: resources }
}

export async function getUser(db: Executor, scope: ScimScope, id: string) {
  const user = /^[0-9a-f-]{36}$/i.test(id) ? await usersOfCompany(db, scope.companyId).where('u.id', '=', id.toLowerCase()).executeTakeFirst() : undefined
  if (!user) throw notFound('user')
  return scimUser(scope, user, await groupsOf(db, scope.companyId, [user.id]))
}

export async function listUsers(db: Executor, scope: ScimScope, query: { filter?: string; startIndex?: number; count?: number }) {
  const conditions = parseFilter(query.filter, USER_FILTERS)
  const users = await usersOfCompany(db, scope.companyId).orderBy('u.created_at').orderBy('u.id').execute()
  const valueOf = (user: UserRow, attribute: string): string | boolean | null => {
    if (attribute === 'username') return user.username
    if (attribute === 'externalid') return user.external_id
    if (attribute === 'emails.value' || attribute === 'emails') return user.email
    if (attribute === 'active') return user.deactivated_at === null
    if (attribute === 'displayname') return user.display_name
    return user.id
  }
  const matching = users.filter((user) => conditions.every((c) => meets(valueOf(user, c.attribute), c)))
  const page = pageOf(matching, query.startIndex, query.count)
  const groups = await groupsOf(db, scope.companyId, page.Resources.map((u) => u.id))
  return { ...page, Resources: page.Resources.map((u) => scimUser(scope, u, groups.filter((g) => g.user_id === u.id))) }
}

/** What a SCIM User body says of the fields this platform keeps. */
interface UserFields {
  userName?: string
  email?: string
  displayName?: string
  externalId?: string | null
  active?: boolean
}

function emailOf(emails: unknown): string | undefined {
  if (!Array.isArray(emails)) return undefined
  const list = emails.filter((e): e is { value: string; primary?: boolean } => typeof e === 'object' && e !== null && typeof (e as { value?: unknown }).value === 'string')
  return (list.find((e) => e.primary) ?? list[0])?.value
}

function nameOf(name: unknown): string | undefined {
  if (typeof name !== 'object' || name === null) return undefined
  const { formatted, givenName, familyName } = name as Record<string, unknown>
  if (typeof formatted === 'string' && formatted.trim()) return formatted.trim()
  const parts = [givenName, familyName].filter((p): p is string => typeof p === 'string' && p.trim() !== '')
  return parts.length ? parts.join(' ') : undefined
}

/** The fields of a whole User resource (POST, PUT). */
export function userFields(body: Record<string, unknown>): UserFields {
  const fields: UserFields = {}
  if (body.userName !== undefined) {
    if (typeof body.userName !== 'string' || body.userName.trim() === '' || body.userName.length > 320) throw invalid('userName', 'userName must be a text of 1 to 320 characters.')
    fields.userName = body.userName.trim()
  }
  const email = emailOf(body.emails) ?? (fields.userName?.includes('@') ? fields.userName : undefined)
  if (email !== undefined) fields.email = email
  const display = (typeof body.displayName === 'string' && body.displayName.trim()) || nameOf(body.name)
  if (display) fields.displayName = display.slice(0, 200)
  if (body.externalId !== undefined) fields.externalId = typeof body.externalId === 'string' ? body.externalId.slice(0, 256) : null
  if (body.active !== undefined) {
    if (typeof body.active !== 'boolean') throw invalid('active', 'active must be true or false.')
    fields.active = body.active
  }
  return fields
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * Refuses a change of someone the token may not reach: a superadmin, a person of other companies too (whose name,
 * email and sign-in are theirs everywhere), or someone above the role of the token's maker.
 */
async function mayChange(db: Executor, company: ScimScope, userId: string): Promise<void> {
  const user = await db.selectFrom('users').select('is_superadmin').where('id', '=', userId).executeTakeFirstOrThrow()
  const member = await db.selectFrom('company_users').select('role').where('company_id', '=', company.companyId).where('user_id', '=', userId).executeTakeFirstOrThrow()
  if (user.is_superadmin || aboveToken(member.role, company.role)) {
    throw new ApiError('forbidden', `This person is ${user.is_superadmin ? 'a superadmin' : `${member.role}, above the role of the token’s maker (${company.role})`}: provisioning does not change them.`)
  }
  if ((await otherCompanies(db, userId, company.companyId)) > 0) {
    throw new ApiError('conflict', 'This person belongs to other companies too: the company cannot change their account or deactivate them everywhere. Remove them from the company instead (DELETE).')
  }
}

/** Keeps the fields; the person's sessions and tokens end at once, on every process, when they are deactivated. */
async function apply(scope: Announcing, company: ScimScope, userId: string, fields: UserFields): Promise<void> {
  const { db } = scope
  await mayChange(db, company, userId)
  if (fields.email !== undefined && !EMAIL.test(fields.email)) throw invalid('emails', `${JSON.stringify(fields.email)} is not an email address.`)
  const clash = await db
    .selectFrom('users')
    .select(['id', 'username', 'email'])
    .where('id', '<>', userId)
    .where((eb) =>
      eb.or([
        ...(fields.userName ? [eb(sql`lower(username)`, '=', fields.userName.toLowerCase())] : []),
        ...(fields.email ? [eb(sql`lower(email)`, '=', fields.email.toLowerCase())] : []),
        eb.val(false),
      ]),
    )
    .executeTakeFirst()
  if (clash) throw new ApiError('conflict', `Another account has this ${clash.username.toLowerCase() === fields.userName?.toLowerCase() ? 'userName' : 'email'}.`)
  const current = await db.selectFrom('users').select('deactivated_at').where('id', '=', userId).executeTakeFirstOrThrow()
  const deactivating = fields.active === false && current.deactivated_at === null
  await db
    .updateTable('users')
    .set({
      ...(fields.userName ? { username: fields.userName } : {}),
      ...(fields.email ? { email: fields.email } : {}),
      ...(fields.displayName ? { display_name: fields.displayName } : {}),
      ...(fields.externalId !== undefined ? { external_id: fields.externalId } : {}),
      ...(fields.active === false ? { deactivated_at: current.deactivated_at ?? new Date() } : fields.active === true ? { deactivated_at: null } : {}),
      updated_at: new Date(),
      version: sql`version + 1`,
    })
    .where('id', '=', userId)
    .execute()
  if (deactivating) {
    await endAccess(db, userId)
    scope.announce({ type: 'credentials', user_id: userId })
  }
}

async function otherCompanies(db: Executor, userId: string, companyId: string): Promise<number> {
  const rows = await db.selectFrom('company_users').select('id').where('user_id', '=', userId).where('company_id', '<>', companyId).execute()
  return rows.length
}

export async function createUser(scope: Announcing, company: ScimScope, body: Record<string, unknown>) {
  const fields = userFields(body)
  if (!fields.userName) throw invalid('userName', 'userName is required.')
  if (!fields.email) throw invalid('emails', 'An email address is required: in emails, or as the userName.')
  if (!EMAIL.test(fields.email)) throw invalid('emails', `${JSON.stringify(fields.email)} is not an email address.`)
  const id = Bun.randomUUIDv7()
  const now = new Date()
  const clash = await scope.db.selectFrom('users').select('id').where((eb) => eb.or([eb(sql`lower(username)`, '=', fields.userName!.toLowerCase()), eb(sql`lower(email)`, '=', fields.email!.toLowerCase())])).executeTakeFirst()
  if (clash) throw new ApiError('conflict', 'An account with this userName or email exists already.')
  await scope.db.insertInto('users').values({ id, username: fields.userName, email: fields.email, display_name: fields.displayName ?? fields.userName, avatar: null, password_hash: null, external_id: fields.externalId ?? null, created_at: now, updated_at: now }).execute()
  await scope.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: company.companyId, user_id: id, role: 'member', created_at: now, updated_at: now }).execute()
  if (fields.active === false) await apply(scope, company, id, { active: false })
  return getUser(scope.db, company, id)
}

export async function replaceUser(scope: Announcing, company: ScimScope, id: string, body: Record<string, unknown>) {
  await getUser(scope.db, company, id)
  const fields = userFields(body)
  if (!fields.userName) throw invalid('userName', 'userName is required.')
  // A replace says the whole resource: what it leaves out of what this platform keeps is cleared or kept active.
  await apply(scope, company, id.toLowerCase(), { externalId: null, active: true, ...fields })
  return getUser(scope.db, company, id)
}

/** A PATCH's operations (RFC 7644 §3.5.2) on the attributes this platform keeps. */
export async function patchUser(scope: Announcing, company: ScimScope, id: string, body: Record<string, unknown>) {
  await getUser(scope.db, company, id)
  const fields: UserFields = {}
  for (const operation of operationsOf(body)) {
    const op = operation.op.toLowerCase()
    if (op === 'remove') {
      if (operation.path?.toLowerCase() === 'externalid') fields.externalId = null
      else throw invalid('Operations', `Removing ${operation.path ?? 'the whole resource'} is not possible here.`)
      continue
    }
    // Without a path, the value is an object of attributes; with one, the value of that attribute.
    const values = operation.path === undefined ? (operation.value as Record<string, unknown>) : { [operation.path]: operation.value }
    if (typeof values !== 'object' || values === null) throw invalid('Operations', 'An add or replace without a path takes an object of attributes.')
    for (const [path, value] of Object.entries(values)) {
      const key = path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:user:/, '')
      if (key === 'active') Object.assign(fields, userFields({ active: typeof value === 'string' ? value.toLowerCase() === 'true' : value }))
      else if (key === 'username') Object.assign(fields, userFields({ userName: value }))
      else if (key === 'displayname') Object.assign(fields, userFields({ displayName: value }))
      else if (key === 'externalid') Object.assign(fields, userFields({ externalId: value }))
      else if (key === 'name' || key.startsWith('name.')) Object.assign(fields, userFields({ name: key === 'name' ? value : { [path.split('.')[1]!]: value } }))
      else if (key === 'emails' || key.startsWith('emails[')) {
        const email = Array.isArray(value) ? emailOf(value) : typeof value === 'string' ? value : undefined
        if (email) fields.email = email
      } else throw invalid('Operations', `The attribute ${path} cannot be changed here.`)
    }
  }
  await apply(scope, company, id.toLowerCase(), fields)
  return getUser(scope.db, company, id)
}

function operationsOf(body: Record<string, unknown>): Array<{ op: string; path?: string; value?: unknown }> {
  const operations = body.Operations
  if (!Array.isArray(operations) || operations.length === 0) throw invalid('Operations', 'A PATCH needs Operations: a list of {op, path, value}.')
  if (operations.length > 100) throw invalid('Operations', 'At most 100 operations at once.')
  return operations.map((o, i) => {
    if (typeof o !== 'object' || o === null || typeof (o as { op?: unknown }).op !== 'string' || !/^(add|replace|remove)$/i.test((o as { op: string }).op)) {
      throw invalid(`Operations[${i}]`, 'Each operation has an op: add, replace or remove.')
    }
    const { op, path, value } = o as { op: string; path?: unknown; value?: unknown }
    if (path !== undefined && typeof path !== 'string') throw invalid(`Operations[${i}].path`, 'A path is a text.')
    return { op, ...(path === undefined ? {} : { path }), value }
  })
}

/** DELETE: the person leaves the company (and its groups); with no company left, they are deactivated too. */
export async function deleteUser(scope: Announcing, company: ScimScope, id: string): Promise<void> {
  await getUser(scope.db, company, id)
  const userId = id.toLowerCase()
  const owner = await scope.db.selectFrom('company_users').select('role').where('company_id', '=', company.companyId).where('user_id', '=', userId).executeTakeFirstOrThrow()
  if (aboveToken(owner.role, company.role)) throw new ApiError('forbidden', `This person is ${owner.role}, above the role of the token’s maker (${company.role}): provisioning does not remove them.`)
  if (owner.role === 'owner') {
    const owners = await scope.db.selectFrom('company_users').select('id').where('company_id', '=', company.companyId).where('role', '=', 'owner').forUpdate().execute()
    if (owners.length <= 1) throw new ApiError('conflict', 'This is the company’s last owner: make someone else owner first.')
  }
  await scope.db.deleteFrom('scim_group_members').where('user_id', '=', userId).where('group_id', 'in', (eb) => eb.selectFrom('scim_groups').select('id').where('company_id', '=', company.companyId)).execute()
  await scope.db.deleteFrom('company_users').where('company_id', '=', company.companyId).where('user_id', '=', userId).execute()
  const user = await scope.db.selectFrom('users').select(['is_superadmin', 'deactivated_at']).where('id', '=', userId).executeTakeFirstOrThrow()
  if (!user.is_superadmin && (await otherCompanies(scope.db, userId, company.companyId)) === 0 && user.deactivated_at === null) {
    await scope.db.updateTable('users').set({ deactivated_at: new Date(), updated_at: new Date() }).where('id', '=', userId).execute()
  }
  await endAccess(scope.db, userId)
  scope.announce({ type: 'credentials', user_id: userId })
}

// ---- groups ---------------------------------------------------------------------------------------------------

type GroupRow = Row<'scim_groups'>

async function membersOf(db: Executor, groupIds: string[]) {
  if (groupIds.length === 0) return []
  return db.selectFrom('scim_group_members as m').innerJoin('users as u', 'u.id', 'm.user_id').select(['m.group_id', 'u.id', 'u.display_name']).where('m.group_id', 'in', groupIds).orderBy('u.display_name').execute()
}

function scimGroup(scope: ScimScope, group: GroupRow, members: Array<{ id: string; display_name: string }>) {
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    displayName: group.display_name,
    ...(group.external_id ? { externalId: group.external_id } : {}),
    members: members.map((m) => ({ value: m.id, display: m.display_name, $ref: `${scope.base}/Users/${m.id}` })),
    meta: { resourceType: 'Group', created: isoOf(group.created_at), lastModified: isoOf(group.updated_at), location: `${scope.base}/Groups/${group.id}`, version: `W/"${group.version}"` },
  }
}

async function groupRow(db: Executor, scope: ScimScope, id: string): Promise<GroupRow> {
  const group = /^[0-9a-f-]{36}$/i.test(id) ? await db.selectFrom('scim_groups').selectAll().where('company_id', '=', scope.companyId).where('id', '=', id.toLowerCase()).executeTakeFirst() : undefined
  if (!group) throw notFound('group')
  return group
}

export async function getGroup(db: Executor, scope: ScimScope, id: string) {
  const group = await groupRow(db, scope, id)
  return scimGroup(scope, group, await membersOf(db, [group.id]))
}

export async function listGroups(db: Executor, scope: ScimScope, query: { filter?: string; startIndex?: number; count?: number; excludedAttributes?: string }) {
  const conditions = parseFilter(query.filter, GROUP_FILTERS)
  const groups = await db.selectFrom('scim_groups').selectAll().where('company_id', '=', scope.companyId).orderBy('display_name').execute()
  const members = await membersOf(db, groups.map((g) => g.id))
  const matching = groups.filter((g) =>
    conditions.every((c) =>
      c.attribute === 'members.value'
        ? members.some((m) => m.group_id === g.id && meets(m.id, c))
        : meets(c.attribute === 'displayname' ? g.display_name : c.attribute === 'externalid' ? g.external_id : g.id, c),
    ),
  )
  const page = pageOf(matching, query.startIndex, query.count)
  // Okta and Entra ask for groups without their members, which can be many.
  const withoutMembers = /(^|,)\s*members\s*(,|$)/i.test(query.excludedAttributes ?? '')
  return { ...page, Resources: page.Resources.map((g) => scimGroup(scope, g, withoutMembers ? [] : members.filter((m) => m.group_id === g.id))) }
}

/** The user ids of `members`, each a person of the company; anyone else is refused, naming them. */
async function memberIds(db: Executor, scope: ScimScope, members: unknown): Promise<string[]> {
  if (members === undefined) return []
  if (!Array.isArray(members)) throw invalid('members', 'members is a list of {value: user id}.')
  const ids = [...new Set(members.map((m) => (typeof m === 'object' && m !== null ? String((m as { value?: unknown }).value ?? '') : '').toLowerCase()))]
  if (ids.length === 0) return []
  const known = ids.every((id) => /^[0-9a-f-]{36}$/.test(id)) ? await db.selectFrom('company_users').select('user_id').where('company_id', '=', scope.companyId).where('user_id', 'in', ids).execute() : []
  const missing = ids.filter((id) => !known.some((k) => k.user_id === id))
  if (missing.length) throw invalid('members', `Not people of the company: ${missing.slice(0, 5).join(', ')}.`)
  return ids
}

function displayNameOf(body: Record<string, unknown>): string {
  const name = body.displayName
  if (typeof name !== 'string' || name.trim() === '' || name.length > 256) throw invalid('displayName', 'displayName must be a text of 1 to 256 characters.')
  return name.trim()
}

async function setMembers(db: Executor, scope: ScimScope, groupId: string, add: string[], remove: string[], replace: boolean): Promise<void> {
  const before = (await db.selectFrom('scim_group_members').select('user_id').where('group_id', '=', groupId).execute()).map((m) => m.user_id)
  if (replace) await db.deleteFrom('scim_group_members').where('group_id', '=', groupId).execute()
  else if (remove.length) await db.deleteFrom('scim_group_members').where('group_id', '=', groupId).where('user_id', 'in', remove).execute()
  if (add.length) await db.insertInto('scim_group_members').values(add.map((userId) => ({ group_id: groupId, user_id: userId }))).onConflict((oc) => oc.doNothing()).execute()
  await syncGroupRoles(db, scope.companyId, [...new Set([...before, ...add, ...remove])], scope.role)
}

async function nameClash(db: Executor, scope: ScimScope, name: string, except?: string): Promise<void> {
  const clash = await db.selectFrom('scim_groups').select('id').where('company_id', '=', scope.companyId).where('display_name', '=', name).$if(except !== undefined, (q) => q.where('id', '<>', except!)).executeTakeFirst()
  if (clash) throw new ApiError('conflict', `The company has a group named ${JSON.stringify(name)} already.`)
}

export async function createGroup(db: Executor, scope: ScimScope, body: Record<string, unknown>) {
  const name = displayNameOf(body)
  await nameClash(db, scope, name)
  const members = await memberIds(db, scope, body.members)
  const id = Bun.randomUUIDv7()
  const now = new Date()
  await db.insertInto('scim_groups').values({ id, company_id: scope.companyId, display_name: name, external_id: typeof body.externalId === 'string' ? body.externalId.slice(0, 256) : null, created_at: now, updated_at: now }).execute()
  await setMembers(db, scope, id, members, [], false)
  return getGroup(db, scope, id)
}

export async function replaceGroup(db: Executor, scope: ScimScope, id: string, body: Record<string, unknown>) {
  const group = await groupRow(db, scope, id)
  const name = displayNameOf(body)
  await nameClash(db, scope, name, group.id)
  const members = await memberIds(db, scope, body.members)
  await db.updateTable('scim_groups').set({ display_name: name, external_id: typeof body.externalId === 'string' ? body.externalId.slice(0, 256) : null, updated_at: new Date(), version: sql`version + 1` }).where('id', '=', group.id).execute()
  await setMembers(db, scope, group.id, members, [], true)
  // A new name may map to another role: everyone in the group is looked at again.
  await syncGroupRoles(db, scope.companyId, members, scope.role)
  return getGroup(db, scope, group.id)
}

export async function patchGroup(db: Executor, scope: ScimScope, id: string, body: Record<string, unknown>) {
  const group = await groupRow(db, scope, id)
  for (const operation of operationsOf(body)) {
    const op = operation.op.toLowerCase()
    const path = operation.path?.toLowerCase()
    // `members[value eq "id"]`: Entra's way of naming one member to remove.
    const one = operation.path ? /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i.exec(operation.path) : null
    if (op === 'remove' && (path === 'members' || one)) {
      const ids = one ? [one[1]!.toLowerCase()] : operation.value === undefined ? (await membersOf(db, [group.id])).map((m) => m.id) : await memberIds(db, scope, operation.value)
      await setMembers(db, scope, group.id, [], ids, false)
    } else if ((op === 'add' || op === 'replace') && path === 'members') {
      await setMembers(db, scope, group.id, await memberIds(db, scope, operation.value), [], op === 'replace')
    } else if ((op === 'add' || op === 'replace') && (path === 'displayname' || (path === undefined && typeof operation.value === 'object' && operation.value !== null))) {
      const values = path === undefined ? (operation.value as Record<string, unknown>) : { displayName: operation.value }
      if (values.displayName !== undefined) {
        const name = displayNameOf(values)
        await nameClash(db, scope, name, group.id)
        await db.updateTable('scim_groups').set({ display_name: name, updated_at: new Date(), version: sql`version + 1` }).where('id', '=', group.id).execute()
        await syncGroupRoles(db, scope.companyId, (await membersOf(db, [group.id])).map((m) => m.id), scope.role)
      }
      if (values.members !== undefined) await setMembers(db, scope, group.id, await memberIds(db, scope, values.members), [], op === 'replace')
      if (values.externalId !== undefined) await db.updateTable('scim_groups').set({ external_id: typeof values.externalId === 'string' ? values.externalId.slice(0, 256) : null }).where('id', '=', group.id).execute()
    } else {
      throw invalid('Operations', `The operation ${operation.op} ${operation.path ?? '(no path)'} is not possible on a group here.`)
    }
  }
  await db.updateTable('scim_groups').set({ updated_at: new Date(), version: sql`version + 1` }).where('id', '=', group.id).execute()
  return getGroup(db, scope, group.id)
}

export async function deleteGroup(db: Executor, scope: ScimScope, id: string): Promise<void> {
  const group = await groupRow(db, scope, id)
  const members = (await membersOf(db, [group.id])).map((m) => m.id)
  await db.deleteFrom('scim_groups').where('id', '=', group.id).execute()
  await syncGroupRoles(db, scope.companyId, members, scope.role)
}
