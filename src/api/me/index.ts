import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import type { ApiEnv } from '../../http/env.ts'
import { commonErrors, signedIn } from '../responses.ts'

const Me = z
  .object({
    user: z.object({ id: z.uuid(), username: z.string(), email: z.string(), display_name: z.string(), is_superadmin: z.boolean() }),
    company_id: z.uuid().nullable().openapi({ description: 'The company this request works in (X-Switchboard-Company picks another).' }),
    role: z.enum(['owner', 'admin', 'member']).nullable(),
    companies: z.array(z.object({ id: z.uuid(), name: z.string(), role: z.enum(['owner', 'admin', 'member']) })),
  })
  .openapi('Me')

const meRoute = createRoute({
  method: 'get',
  path: '/api/me',
  operationId: 'getMe',
  summary: 'Who the credentials belong to, and where they work',
  tags: ['Auth'],
  security: signedIn,
  responses: { 200: { description: 'The signed-in user.', content: { 'application/json': { schema: Me } } }, ...commonErrors },
})

export function mountMe(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(meRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const db = c.var.services.db
    const [user, companies] = await Promise.all([
      db.selectFrom('users').select(['id', 'username', 'email', 'display_name', 'is_superadmin']).where('id', '=', actor.userId).executeTakeFirstOrThrow(),
      db
        .selectFrom('company_users as m')
        .innerJoin('companies as c', 'c.id', 'm.company_id')
        .select(['c.id', 'c.name', 'm.role'])
        .where('m.user_id', '=', actor.userId)
        .orderBy('m.created_at')
        .execute(),
    ])
    return c.json({ user, company_id: actor.companyId, role: actor.role, companies }, 200)
  })
}
