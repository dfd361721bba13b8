import { z } from '@hono/zod-openapi'
import { ApiError, zodErrors } from '../errors.ts'

/** Validates a tool's or a route's input, refusing it with every problem named (422). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const parsed = schema.safeParse(input)
  if (parsed.success) return parsed.data
  const errors = zodErrors(parsed.error)
  throw new ApiError('validation_error', `The input is not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}.`, { errors })
}

/** A schema as the JSON Schema of a tool's input, as MCP hosts and models read it. */
export function jsonSchemaOf(schema: z.ZodType): { type: 'object' } & Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  return json as { type: 'object' } & Record<string, unknown>
}

/** A tool's input, declared once: the schema hosts and models are shown, and the validation the tool runs. */
export interface ToolInput<T extends z.ZodObject> {
  inputSchema: { type: 'object' } & Record<string, unknown>
  parse(args: unknown): z.output<T>
}

export function toolInput<T extends z.ZodObject>(schema: T): ToolInput<T> {
  // A call without arguments is a call with none.
  return { inputSchema: jsonSchemaOf(schema), parse: (args) => parseInput(schema, args ?? {}) }
}
