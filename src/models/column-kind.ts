import type { z } from 'zod'

/** How a field is stored, which decides how a list filter's text is read and which operators apply. */
export type ColumnKind = 'uuid' | 'text' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'enum' | 'json'

interface Def {
  type: string
  format?: string
  innerType?: z.core.$ZodType
  checks?: Array<{ _zod: { def: { format?: string } } }>
}

function def(schema: z.core.$ZodType): Def {
  return schema._zod.def as Def
}

/** Looks through optional, nullable and default wrappers to the stored type. */
export function columnKind(schema: z.core.$ZodType): ColumnKind {
  let d = def(schema)
  while (d.innerType) d = def(d.innerType)
  switch (d.type) {
    case 'boolean':
      return 'boolean'
    case 'enum':
    case 'literal':
      return 'enum'
    case 'number':
      return d.format === 'safeint' || d.checks?.some((c) => c._zod.def.format === 'safeint') ? 'integer' : 'number'
    case 'string':
      if (d.format === 'uuid') return 'uuid'
      if (d.format === 'datetime') return 'timestamp'
      return 'text'
    default:
      return 'json'
  }
}

/** The enum's allowed values, for filter validation. */
export function enumValues(schema: z.core.$ZodType): string[] {
  let d = def(schema) as Def & { entries?: Record<string, string>; values?: unknown[] }
  while (d.innerType) d = def(d.innerType) as typeof d
  if (d.entries) return Object.values(d.entries)
  return (d.values ?? []).map(String)
}
