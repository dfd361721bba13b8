import { z } from '@hono/zod-openapi'
import { VERBS, defineModel, type Model } from './define.ts'

/**
 * ModelAcl names the models it overrides, so it is made from the list of the others (the registry does this):
 * an override for a model that does not exist is refused, not stored to no effect.
 */
export function defineModelAcl(others: readonly Model[]): Model {
  const names: [string, ...string[]] = ['ModelAcl', ...others.map((m) => m.name)]
  return defineModel({
    name: 'ModelAcl',
    table: 'model_acls',
    description:
      'Overrides, per model and verb, the least role a model declares. Takes effect without a restart. Verbs a model keeps for superadmins stay theirs.',
    fields: {
      model: z.enum(names),
      verb: z.enum(VERBS as [string, ...string[]]),
      min_role: z.enum(['member', 'admin', 'owner', 'superadmin']),
    },
    audited: true,
    access: { list: 'superadmin', read: 'superadmin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
    affectsAccess: true,
    example: { model: 'WebchatMessage', verb: 'delete', min_role: 'owner' },
  })
}
