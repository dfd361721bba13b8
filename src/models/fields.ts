import { z } from '@hono/zod-openapi'

/** Field schemas several models share. */

/** As loose as the store's uuid column: any 8-4-4-4-12 hex id, not only RFC 9562 ones with a version digit. */
export const anyUuid = z.guid()

export function isUuid(text: string): boolean {
  return anyUuid.safeParse(text).success
}

export const slug = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, 'lowercase letters, digits and inner dashes, at most 64')
