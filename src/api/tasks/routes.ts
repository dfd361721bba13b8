import { createRoute, z } from '@hono/zod-openapi'
import { BackgroundTask } from '../../models/background-task.ts'
import { commonErrors, notFoundError, ProblemSchema, signedIn, validationErrors } from '../responses.ts'

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

const StartTaskRequest = z
  .strictObject({
    tool: z.string().min(3).max(200).openapi({ description: 'The tool as server__tool, as agents name it.', example: 'everything__trigger-long-running-operation' }),
    arguments: z.record(z.string(), z.unknown()).default({}).openapi({ description: 'The tool’s arguments.', example: { duration: 30, steps: 10 } }),
  })
  .openapi('StartTaskRequest')

export const startTaskRoute = createRoute({
  method: 'post',
  path: '/api/tasks',
  operationId: 'startBackgroundTask',
  summary: 'Run an MCP tool in the background',
  description:
    'Starts the tool with the caller’s MCP permissions and answers at once with the running task. Follow it at GET /api/v1/BackgroundTask/{id} ' +
    '(status, progress, result); stop it with POST /api/tasks/cancel. Each person may have a limited number running at once (409 beyond it).',
  tags: ['Background tasks'],
  security: signedIn,
  request: { body: { required: true, content: { 'application/json': { schema: StartTaskRequest } } } },
  responses: {
    202: { description: 'The task, running.', content: { 'application/json': { schema: BackgroundTask.record } } },
    ...commonErrors,
    ...validationErrors,
    409: problem('The caller already has as many tasks running as the limit per person allows.'),
    503: problem('The server is stopping.'),
  },
})

export const cancelTaskRoute = createRoute({
  method: 'post',
  path: '/api/tasks/cancel',
  operationId: 'cancelBackgroundTask',
  summary: 'Cancel one of your background tasks',
  description: 'Stops the tool wherever it runs. A task that has already ended is left as it is (`cancelled` is then false).',
  tags: ['Background tasks'],
  security: signedIn,
  request: {
    body: { required: true, content: { 'application/json': { schema: z.strictObject({ task_id: z.uuid() }).openapi('CancelTaskRequest') } } },
  },
  responses: {
    200: {
      description: 'Whether this call cancelled it, and the task as it is now.',
      content: { 'application/json': { schema: z.object({ cancelled: z.boolean(), task: BackgroundTask.record }).openapi('CancelTaskResult') } },
    },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
  },
})
