import { z } from 'zod'

export const PLUGIN_KINDS = ['channel', 'runner', 'service', 'mcp', 'theme'] as const
const pluginName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lowercase letters, digits and dashes, at most 64')

/** A plugin's manifest.json (DESIGN §4, Plugins). */
export const Manifest = z.strictObject({
  name: pluginName,
  version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, 'a semantic version such as 1.0.0'),
  kind: z.enum(PLUGIN_KINDS),
  description: z.string().min(1).max(500),
  entry: z
    .string()
    .regex(/^(?:\.\/)?[A-Za-z0-9_-][A-Za-z0-9_./-]*\.(?:ts|tsx|js|mjs)$/, 'a module path inside the plugin folder, e.g. index.ts')
    .refine((path) => !path.split('/').includes('..'), 'must stay inside the plugin folder'),
  public_api: z.boolean().default(false),
  public_api_prefix: z.string().regex(/^\/(?:[a-z0-9_-]+(?:\/[a-z0-9_-]+)*)?$/, 'a path such as /webhooks/slack, or /').optional(),
  dependencies: z.array(pluginName).max(50).default([]),
  config_schema: z.record(z.string(), z.unknown()).optional(),
  ui: z.record(z.string(), z.unknown()).optional(),
})

export type Manifest = z.infer<typeof Manifest>
