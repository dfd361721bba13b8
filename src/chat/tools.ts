import type { Actor } from '../auth/actor.ts'
import type { ToolSpec } from '../runners/contract.ts'

/**
 * Where the turn loop sends the tool calls a model asks for. The MCP gateway plugs in here (issue 5); until then
 * the built-in tools serve.
 */
export interface ToolExecutor {
  list(actor: Actor): ToolSpec[]
  call(actor: Actor, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string>
}

interface BuiltIn {
  spec: ToolSpec
  run(args: Record<string, unknown>): string
}

const BUILT_IN: BuiltIn[] = [
  {
    spec: {
      name: 'current_time',
      description: 'The current date and time, in UTC or in an IANA time zone.',
      parameters: { type: 'object', properties: { time_zone: { type: 'string', description: 'e.g. Europe/Paris' } } },
    },
    run({ time_zone }) {
      const zone = typeof time_zone === 'string' ? time_zone : 'UTC'
      return new Date().toLocaleString('sv-SE', { timeZone: zone, timeZoneName: 'short' })
    },
  },
]

export class BuiltInTools implements ToolExecutor {
  list(): ToolSpec[] {
    return BUILT_IN.map((tool) => tool.spec)
  }

  async call(_actor: Actor, name: string, args: Record<string, unknown>): Promise<string> {
    const tool = BUILT_IN.find((t) => t.spec.name === name)
    if (!tool) throw new Error(`There is no tool named ${name}.`)
    return tool.run(args)
  }
}
