import { createRoute, z } from '@hono/zod-openapi'
import { IdParam } from '../params.ts'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const Status = z.enum(['pending', 'approved', 'denied', 'expired', 'cancelled'])

export const ToolApproval = z
  .object({
    id: z.uuid(),
    conversation_id: z.uuid().nullable(),
    agent_id: z.uuid().nullable(),
    user_id: z.uuid().openapi({ description: 'Whose turn it is: they may always answer.' }),
    server: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()).openapi({ description: 'As the model sent them, with values under secret-looking keys (password, token, api_key…) masked.' }),
    rule: z.string().openapi({ description: 'What asked for approval: a permission rule (by id) or the agent’s own list.' }),
    approvers: z.enum(['self', 'admins']).openapi({ description: '`admins`: the company’s admins may answer too.' }),
    status: Status.openapi({ description: '`expired`: nobody answered in time (a no); `cancelled`: the turn ended while it waited.' }),
    decided_by: z.uuid().nullable(),
    decided_by_name: z.string().nullable().openapi({ description: 'Who answered, by the name people see.' }),
    decided_at: z.iso.datetime().nullable(),
    expires_at: z.iso.datetime(),
    created_at: z.iso.datetime(),
  })
  .openapi('ToolApproval', { description: 'A tool call that waits, or waited, for a person’s yes.' })

export const listApprovalsRoute = createRoute({
  method: 'get',
  path: '/api/approvals',
  operationId: 'listToolApprovals',
  summary: 'Tool calls waiting for, or given, a person’s yes',
  description: 'Your own requests; a company admin sees the company’s. Newest first.',
  tags: ['Approvals'],
  security: signedIn,
  request: {
    query: z.object({
      status: Status.optional(),
      conversation_id: z.uuid().optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
  },
  responses: { 200: { description: 'The requests.', content: { 'application/json': { schema: z.object({ data: z.array(ToolApproval) }) } } }, ...commonErrors },
})

export const decideApprovalRoute = createRoute({
  method: 'post',
  path: '/api/approvals/{id}/decision',
  operationId: 'decideToolApproval',
  summary: 'Say yes or no to a tool call',
  description:
    'The person whose turn it is answers, or a company admin where the rule lets admins. The first answer stands: a request already answered (or expired) is a 409 saying how it ended. ' +
    'A yes runs the tool; a no tells the agent the person declined, and the turn goes on.',
  tags: ['Approvals'],
  security: signedIn,
  request: {
    params: IdParam,
    body: { required: true, content: { 'application/json': { schema: z.strictObject({ approve: z.boolean() }).openapi('ToolApprovalDecision') } } },
  },
  responses: {
    200: { description: 'Answered.', content: { 'application/json': { schema: ToolApproval } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
    ...conflictErrors,
  },
})
