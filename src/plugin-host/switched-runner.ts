import type { Runner, RunnerEvent, RunnerRequest } from '../runners/contract.ts'

/** A runner that answers a turn with a clear error while its plugin is off, instead of running. */
export function switchedRunner(runner: Runner, plugin: string, isEnabled: (plugin: string) => boolean): Runner {
  async function* refused(): AsyncGenerator<RunnerEvent> {
    yield {
      type: 'error',
      text: `The runner "${runner.name}" is switched off: its plugin ${plugin} is disabled.`,
      details: `A superadmin can enable it (POST /api/plugins/${plugin}/enable), or the agent can use another runner.`,
      error_type: 'runner_disabled',
    }
  }
  const stream = (request: RunnerRequest) => (isEnabled(plugin) ? runner.stream(request) : refused())
  return new Proxy(runner, { get: (target, key) => (key === 'stream' ? stream : Reflect.get(target, key)) })
}
