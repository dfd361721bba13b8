import { z } from '@hono/zod-openapi'
import { anyUuid } from '../models/fields.ts'


/** `{id}` in a route's path: a record's UUID, in either case. */
export const IdParam = z.object({
  id: anyUuid.openapi({ param: { name: 'id', in: 'path' }, format: 'uuid', example: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' }),
})
