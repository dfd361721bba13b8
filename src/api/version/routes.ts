import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors } from '../responses.ts'

export const versionRoute = createRoute({
  method: 'get',
  path: '/api/version',
  operationId: 'getVersion',
  summary: 'The platform’s version and the API’s',
  description: 'For anyone: scripts check it before relying on what a version added. See the compatibility policy in the README.',
  tags: ['Operations'],
  security: [],
  responses: {
    200: {
      description: 'The versions.',
      content: {
        'application/json': {
          schema: z
            .object({
              version: z.string().openapi({ description: 'The platform’s version (semantic versioning), as in OpenAPI’s info.version.', example: '0.2.0' }),
              api: z.literal('v1').openapi({ description: 'The API’s major version, the one in /api/v1 paths.' }),
            })
            .openapi('Version'),
        },
      },
    },
    ...commonErrors,
  },
})
