import { z } from '@hono/zod-openapi'
import { defineModel } from './define.ts'
import { jsonDepth, MAX_JSON_DEPTH } from './json-depth.ts'
import { SETTINGS, settingProblem } from '../settings/system.ts'

export const SystemConfig = defineModel({
  name: 'SystemConfig',
  table: 'system_config',
  description:
    'Platform-wide settings as keyed JSON values, read without a restart. These keys are the platform’s own, each validated: ' +
    Object.entries(SETTINGS)
      .map(([key, setting]) => `\`${key}\` (${setting.description})`)
      .join('; ') +
    '. Other keys are free for operators’ and plugins’ own use.',
  fields: {
    key: z.string().regex(/^[a-z][a-z0-9_.]{0,127}$/, 'lowercase letters, digits, dots and underscores'),
    // Any JSON value but null (null in a merge patch means "reset"); not z.json(), whose recursion the document
    // generator cannot follow.
    value: z
      .union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.record(z.string(), z.unknown())])
      .refine((value) => jsonDepth(value) <= MAX_JSON_DEPTH, `nests deeper than ${MAX_JSON_DEPTH} levels`)
      .openapi({ description: 'Any JSON value except null.' }),
    description: z.string().max(2000).default(''),
  },
  refine: (record) => {
    const problem = typeof record.key === 'string' ? settingProblem(record.key, record.value) : undefined
    return problem ? [{ path: 'value', message: `not a valid ${String(record.key)}: ${problem}` }] : []
  },
  // Platform-wide, so no company's admins read it.
  audited: true,
  access: { list: 'superadmin', read: 'superadmin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  example: { key: 'chat.max_attachments', value: 20, description: 'Attachments allowed per message.' },
})
