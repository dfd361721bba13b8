import {
  ApiError,
  createRoute,
  definePlugin,
  problem,
  requireMember,
  signedIn,
  z,
  type MiddlewareHandler,
  type ModelEntry,
  type PluginEnv,
  type Runner,
} from '../../src/plugin-host/sdk.ts'

const Query = z
  .strictObject({
    prompt: z.string().min(1).max(200_000).openapi({ example: 'What is the capital of France? One word.' }),
    runner: z.string().min(1).max(64).optional().openapi({ description: 'A runner by name; the plugin’s default runner when left out.', example: 'openai' }),
    model: z.string().min(1).max(200).optional().openapi({ description: 'A model of the runner (its id); its first when left out.' }),
    timeout_seconds: z.int().min(1).max(900).default(900).openapi({ description: 'How long the model may take; 504 after that.' }),
  })
  .openapi('RlmQuery', { description: 'One prompt, no tools, no session.' })

const Answer = z
  .object({
    text: z.string().openapi({ example: 'Paris' }),
    cost_usd: z.number().openapi({ description: 'What the call cost, recorded against the caller’s company.', example: 0.00012 }),
    is_error: z.boolean().openapi({ description: 'The model failed; `text` says why. Not an HTTP failure, so a script reads it like an answer.' }),
  })
  .openapi('RlmAnswer')

// Sign-in is checked before the body, so an anonymous caller learns nothing about what a query looks like.
const membersOnly: MiddlewareHandler<PluginEnv> = async (c, next) => {
  requireMember(c)
  await next()
}

function queryRoute(throttle: MiddlewareHandler<PluginEnv>) {
  return createRoute({
    method: 'post',
    path: '/rlm-query',
    operationId: 'rlmQuery',
    summary: 'Ask a model one prompt and get its whole answer',
    description: 'For scripts and recursive language-model calls. Members of a company only: each query is recorded as a UsageRecord.',
    tags: ['RLM'],
    security: signedIn,
    middleware: [throttle, membersOnly] as const,
    request: { body: { required: true, content: { 'application/json': { schema: Query } } } },
    responses: {
      200: { description: 'The model’s answer, or its failure with `is_error`.', content: { 'application/json': { schema: Answer } } },
      400: problem('The body is malformed JSON.'),
      401: problem('No valid credentials.'),
      403: problem('The caller is not a member of any company.'),
      415: problem('The body is not sent as application/json.'),
      422: problem('The query breaks the schema, or names a model the runner does not have.'),
      429: problem('Over the API rate; see Retry-After.'),
      503: problem('No runner of that name is installed.'),
      504: problem('The model did not answer within timeout_seconds.'),
    },
  })
}

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
    context.router.openapi(queryRoute(context.throttle), async (c) => {
      const query = c.req.valid('json')
      const name = query.runner ?? defaultRunner
      const runner = context.runner(name)
      // A runner the caller named and mistyped is their error; the configured default missing is the operator's.
      if (!runner && query.runner !== undefined) throw new ApiError('validation_error', 'No runner of that name is installed.', { errors: [{ path: 'runner', message: 'no such runner' }] })
      if (!runner) throw new ApiError('unavailable', `The default runner ${name} is not installed.`)
      const model = await context.model(runner.name, query.model)
      if (!model) throw new ApiError('validation_error', `The runner ${runner.name} has no model ${query.model}.`, { errors: [{ path: 'model', message: 'no such model' }] })
      const spent: Spent = { input_tokens: 0, output_tokens: 0, cost_usd: 0 }
      try {
        return c.json(await ask(runner, model, query, spent), 200)
      } finally {
        await context.recordUsage(c, { runner: runner.name, model: model.id, ...spent })
      }
    })
  },
})
