import { z } from 'zod'
import { ApiError, definePlugin, requireMember, type ModelEntry, type Runner } from '../../src/plugin-host/sdk.ts'

const Query = z.strictObject({
  prompt: z.string().min(1).max(200_000),
  runner: z.string().min(1).max(64).optional(),
  model: z.string().min(1).max(200).optional(),
  timeout_seconds: z.int().min(1).max(900).default(900),
})

interface Spent {
  input_tokens: number
  output_tokens: number
  cost_usd: number
}

/** Adds what the model reports it used to `spent` as it goes, so a failed or timed-out call is counted too. */
async function ask(runner: Runner, model: ModelEntry, query: z.infer<typeof Query>, spent: Spent) {
  const signal = AbortSignal.timeout(query.timeout_seconds * 1000)
  let text = ''
  for await (const event of runner.stream({ messages: [{ role: 'user', content: query.prompt }], tools: [], model, signal })) {
    if (event.type === 'text') text += event.text
    else if (event.type === 'usage') {
      spent.input_tokens += event.input_tokens
      spent.output_tokens += event.output_tokens
      spent.cost_usd += event.cost_usd
    } else if (event.type === 'error') return { text: event.text, cost_usd: spent.cost_usd, is_error: true }
    if (signal.aborted) break
  }
  if (signal.aborted) throw new ApiError('timeout', `The model did not answer within ${query.timeout_seconds} s.`)
  return { text, cost_usd: spent.cost_usd, is_error: false }
}

export default definePlugin({
  setup(context) {
    // SWITCHBOARD_PLUGIN_RLM_RUNNER picks the runner a query without one goes to.
    const defaultRunner = context.settings.runner ?? 'echo'
    // Queries spend a company's money: members only, under the API's rate limit, each one recorded.
    context.router.post('/rlm-query', context.throttle, async (c) => {
      requireMember(c)
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
      const spent: Spent = { input_tokens: 0, output_tokens: 0, cost_usd: 0 }
      try {
        return c.json(await ask(runner, model, parsed.data, spent))
      } finally {
        await context.recordUsage(c, { runner: runner.name, model: model.id, ...spent })
      }
    })
  },
})
