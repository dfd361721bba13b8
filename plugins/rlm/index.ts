import { z } from 'zod'
import { ApiError, definePlugin, requireActor, type ModelEntry, type Runner } from '../../src/plugin-host/sdk.ts'

const Query = z.strictObject({
  prompt: z.string().min(1).max(200_000),
  runner: z.string().min(1).max(64).optional(),
  model: z.string().min(1).max(200).optional(),
  timeout_seconds: z.int().min(1).max(900).default(900),
})

async function ask(runner: Runner, model: ModelEntry, query: z.infer<typeof Query>) {
  const signal = AbortSignal.timeout(query.timeout_seconds * 1000)
  let text = ''
  let cost = 0
  for await (const event of runner.stream({ messages: [{ role: 'user', content: query.prompt }], tools: [], model, signal })) {
    if (event.type === 'text') text += event.text
    else if (event.type === 'usage') cost += event.cost_usd
    else if (event.type === 'error') return { text: event.text, cost_usd: cost, is_error: true }
    if (signal.aborted) break
  }
  if (signal.aborted) throw new ApiError('timeout', `The model did not answer within ${query.timeout_seconds} s.`)
  return { text, cost_usd: cost, is_error: false }
}

export default definePlugin({
  setup(context) {
    // SWITCHBOARD_PLUGIN_RLM_RUNNER picks the runner a query without one goes to.
    const defaultRunner = context.settings.runner ?? 'echo'
    context.router.post('/rlm-query', async (c) => {
      requireActor(c)
      const body = await c.req.json().catch(() => {
        throw new ApiError('bad_request', 'Malformed JSON in request body')
      })
      const parsed = Query.safeParse(body)
      if (!parsed.success) {
        const errors = parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message }))
        throw new ApiError('validation_error', 'The query is not valid.', { errors })
      }
      const name = parsed.data.runner ?? defaultRunner
      const runner = context.runner(name)
      if (!runner) throw new ApiError('unavailable', `No runner named ${name} is installed.`)
      const model = await context.model(runner.name, parsed.data.model)
      if (!model) throw new ApiError('validation_error', `The runner ${runner.name} has no model ${parsed.data.model}.`, { errors: [{ path: 'model', message: 'no such model' }] })
      return c.json(await ask(runner, model, parsed.data))
    })
  },
})
