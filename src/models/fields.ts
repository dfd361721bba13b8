import { z } from '@hono/zod-openapi'

/** Field schemas several models share. */

/** As loose as the store's uuid column: any 8-4-4-4-12 hex id, not only RFC 9562 ones with a version digit. */
export const anyUuid = z.guid()

export function isUuid(text: string): boolean {
  return anyUuid.safeParse(text).success
}

export const nullableUuid = z.uuid().nullable().default(null)
export const slug = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, 'lowercase letters, digits and inner dashes, at most 64')
/** A vault secret's name, used wherever configuration refers to a secret instead of holding it. */
export const secretName = z
  .string()
  .regex(/^[A-Za-z0-9_.\-/]{1,128}$/, 'a vault secret name: letters, digits and _ . - /')
  .openapi({ description: 'Name of a vault secret; the value itself is never stored here.' })
export const pluginName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a plugin name: lowercase letters, digits, dashes')
