import { requireJson } from '../json-body.ts'
import { createRoute, z } from '@hono/zod-openapi'
import { PLUGIN_KINDS } from '../../plugin-host/manifest.ts'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const Scalar = z.union([z.string(), z.number(), z.boolean()])

const SettingSpec = z
  .object({
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    title: z.string().optional(),
    description: z.string().optional(),
    enum: z.array(Scalar).optional(),
    default: Scalar.optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    minLength: z.int().optional(),
    maxLength: z.int().optional(),
    pattern: z.string().optional(),
    format: z.string().optional(),
    writeOnly: z.boolean().optional().openapi({ description: 'A secret: kept in the vault, never shown (so is `format: "password"`).' }),
  })
  .openapi('PluginSetting')

export const PluginInfo = z
  .object({
    name: z.string(),
    version: z.string(),
    kind: z.enum(PLUGIN_KINDS),
    description: z.string(),
    public_api: z.boolean(),
    mounted_at: z.string().openapi({ description: 'Where the plugin’s routes answer.' }),
    dependencies: z.array(z.string()),
    enabled: z.boolean().openapi({ description: 'Switched on, with everything it depends on. Off, its routes answer 404, its tools and runners are gone.' }),
    config_schema: z
      .object({ type: z.literal('object'), properties: z.record(z.string(), SettingSpec), required: z.array(z.string()) })
      .nullable()
      .openapi({ description: 'The plugin’s settings as a JSON Schema object of scalar properties; null when it has none.' }),
    theme: z
      .object({ css: z.boolean(), logo: z.boolean() })
      .nullable()
      .openapi({ description: 'What a theme plugin ships; null for other kinds.' }),
  })
  .openapi('PluginInfo')

const PluginSettings = z
  .object({
    values: z.record(z.string(), Scalar).openapi({ description: 'Stored non-secret settings; a key missing here takes its default.', example: { runner: 'echo' } }),
    secrets: z.record(z.string(), z.object({ set: z.boolean() })).openapi({ description: 'Whether each secret setting has a value; values are never shown.', example: { api_key: { set: true } } }),
    fixed_by_environment: z
      .array(z.string())
      .openapi({ description: 'Keys set by SWITCHBOARD_PLUGIN_<NAME>_<KEY> variables: the operator’s value wins over a stored one.', example: ['base_url'] }),
  })
  .openapi('PluginSettings')

const SettingsInput = z
  .record(z.string(), Scalar.nullable())
  .openapi('PluginSettingsInput', {
    description:
      'Every non-secret setting to keep (one left out falls back to its default). Secrets: a value sets it, null deletes it, one left out stays as it is.',
    example: { runner: 'echo', api_key: 'sk-…' },
  })

const params = z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'theme-dark' }) })
const json = (schema: z.ZodType, description: string, headers?: Record<string, { description: string; schema: { type: 'string' } }>) => ({
  200: { description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) },
})
const etag = { ETag: { description: 'The settings’ version, for If-Match.', schema: { type: 'string' as const } } }
const common = { tags: ['Plugins'], security: signedIn }

export const listPlugins = createRoute({
  ...common,
  method: 'get',
  path: '/api/plugins',
  operationId: 'listPlugins',
  summary: 'The plugins this instance loaded, in dependency order, and whether each is switched on',
  responses: { ...json(z.object({ data: z.array(PluginInfo) }), 'Loaded plugins.'), ...commonErrors },
})

const switchRoute = (verb: 'enable' | 'disable') =>
  createRoute({
    ...common,
    method: 'post',
    path: `/api/plugins/{name}/${verb}`,
    operationId: `${verb}Plugin`,
    summary: verb === 'enable' ? 'Switch a plugin on, in every process, without a restart' : 'Switch a plugin off, in every process, without a restart',
    description:
      verb === 'enable'
        ? 'Superadmins only. Its dependencies must be on. Enabling a theme switches the other theme off. ON_STARTUP hooks run again.'
        : 'Superadmins only. No plugin that is on may depend on it. Its routes answer 404, its tools and runners are withdrawn.',
    request: { params },
    responses: { ...json(PluginInfo, 'The plugin now.'), ...commonErrors, ...notFoundError, 409: conflictErrors[409] },
  })

export const enablePlugin = switchRoute('enable')
export const disablePlugin = switchRoute('disable')

export const readSettings = createRoute({
  ...common,
  method: 'get',
  path: '/api/plugins/{name}/settings',
  operationId: 'readPluginSettings',
  summary: 'A plugin’s settings (secrets only say whether they are set)',
  description: 'Superadmins only: settings hold deployment details.',
  request: { params },
  responses: { ...json(PluginSettings, 'The settings.', etag), ...commonErrors, ...notFoundError },
})

export const writeSettings = createRoute({
  ...common,
  method: 'put',
  path: '/api/plugins/{name}/settings',
  operationId: 'writePluginSettings',
  summary: 'Replace a plugin’s settings, checked against its config_schema',
  description: 'Superadmins only. Honours If-Match (412 on a stale version). The plugin sees the change at once and its ON_STARTUP hooks run again.',
  middleware: [requireJson] as const,
  request: {
    params,
    headers: z.object({ 'if-match': z.string().optional().openapi({ description: 'The ETag read with the settings.' }) }),
    body: { required: true, content: { 'application/json': { schema: SettingsInput } } },
  },
  responses: { ...json(PluginSettings, 'The settings as stored.', etag), ...commonErrors, ...notFoundError, ...validationErrors, 412: conflictErrors[412] },
})
