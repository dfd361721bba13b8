import type { ApiClient } from '../../api-client.ts'
import { SETTINGS } from '../../../settings/system.ts'
import type { ConsoleResource, Ctx, Option } from '../resource.ts'

const VERBS = ['list', 'read', 'create', 'update', 'delete'].map((v) => ({ value: v, label: v }))
const ROLES = ['member', 'admin', 'owner', 'superadmin'].map((r) => ({ value: r, label: r }))

export const modelAcls: ConsoleResource = {
  model: 'ModelAcl',
  path: '/model-acls',
  title: 'Model permissions',
  singular: 'model permission',
  intro: 'Overrides, per model and verb, the least role the model declares. Takes effect at once. Superadmins only.',
  columns: [
    { field: 'model', label: 'Model' },
    { field: 'verb', label: 'Verb' },
    { field: 'min_role', label: 'Least role' },
  ],
  search: { field: 'model', label: 'Model contains' },
  fields: [
    { name: 'model', label: 'Model', kind: 'select', options: 'models', required: true },
    { name: 'verb', label: 'Verb', kind: 'select', options: 'verbs', required: true },
    { name: 'min_role', label: 'Least role', kind: 'select', options: 'roles', required: true },
  ],
  options: async (c, api) => ({ models: await modelNames(c, api), verbs: VERBS, roles: ROLES }),
  nameOf: (row) => `${row.model} ${row.verb}`,
}

/** The models an override may name: the API document's own list of them (the ModelAcl schema's `model` enum). */
async function modelNames(c: Ctx, api: ApiClient): Promise<Option[]> {
  const { body } = await api.call(c, 'GET', '/api/openapi.json')
  const names = (body as { components?: { schemas?: Record<string, { properties?: Record<string, { enum?: unknown }> }> } } | undefined)?.components?.schemas?.ModelAclCreate?.properties?.model?.enum
  return (Array.isArray(names) ? names : []).filter((name): name is string => typeof name === 'string').map((name) => ({ value: name, label: name }))
}

export const systemConfig: ConsoleResource = {
  model: 'SystemConfig',
  path: '/system-config',
  title: 'System settings',
  singular: 'setting',
  intro:
    'Platform-wide settings as keyed JSON values, applied without a restart. Superadmins only. The platform reads these keys: ' +
    Object.entries(SETTINGS)
      .map(([key, setting]) => `${key}, ${setting.description.charAt(0).toLowerCase()}${setting.description.slice(1, -1)} (default ${JSON.stringify(setting.default)})`)
      .join('; ') +
    '. Other keys are free for your own use.',
  columns: [
    { field: 'key', label: 'Key' },
    { field: 'value', label: 'Value', sortable: false },
    { field: 'description', label: 'Description' },
  ],
  search: { field: 'key', label: 'Key contains' },
  fields: [
    { name: 'key', label: 'Key', required: true, help: 'Lowercase letters, digits, dots and underscores, e.g. chat.max_attachments.' },
    { name: 'value', label: 'Value (JSON)', kind: 'json', required: true, help: 'Any JSON value but null: 20, "text", true, [1, 2], {"a": 1}.' },
    { name: 'description', label: 'Description', kind: 'textarea' },
  ],
  nameOf: (row) => String(row.key ?? ''),
}
