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
  const off = () => Promise.reject(new Error(`The runner "${runner.name}" is switched off: its plugin ${plugin} is disabled.`))
  // Speech is switched off with the plugin too; a runner without it keeps saying so (the method stays absent).
  const guarded: Partial<Runner> = {
    stream,
    ...(runner.transcribe ? { transcribe: (request) => (isEnabled(plugin) ? runner.transcribe!(request) : off()) } : {}),
    ...(runner.speak ? { speak: (request) => (isEnabled(plugin) ? runner.speak!(request) : off()) } : {}),
  }
  return new Proxy(runner, { get: (target, key) => (key in guarded ? guarded[key as keyof Runner] : Reflect.get(target, key)) })
}
