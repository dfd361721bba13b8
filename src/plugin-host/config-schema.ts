/**
 * A plugin's settings as its manifest's `config_schema` declares them: a JSON Schema object whose properties are
 * scalars. Only that subset is understood, so anything outside it is refused at load rather than half-honoured.
 */
import type { FieldError } from '../errors.ts'

const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean'] as const
type SettingType = (typeof SCALAR_TYPES)[number]
type Scalar = string | number | boolean

export interface SettingSpec {
  type: SettingType
  title?: string
  description?: string
  enum?: Scalar[]
  default?: Scalar
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  /** Kept in the vault, never shown: `format: "password"` or `writeOnly: true`. */
  writeOnly?: boolean
}

/** The normalised schema: what GET /api/plugins shows and what writes are validated against. */
export interface ConfigSchema {
  type: 'object'
  properties: Record<string, SettingSpec>
  required: string[]
}

/** Setting keys become the tail of SWITCHBOARD_PLUGIN_<NAME>_<KEY>, read back in lower case. */
const KEY = /^[a-z][a-z0-9_]{0,63}$/
const TOP_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'title', 'description', '$schema'])
const PROPERTY_KEYWORDS = new Set(['type', 'title', 'description', 'enum', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format', 'writeOnly'])
/** Without a maxLength of its own, a text setting is capped here: settings are configuration, not documents. */
const TEXT_LIMIT = 10_000
/** Keys of the older form (key → description) that hold credentials and so belong in the vault. */
const LEGACY_SECRET = /(?:^|_)(?:api_key|password|secret|token)$/

export function isSecret(spec: SettingSpec): boolean {
  return spec.format === 'password' || spec.writeOnly === true
}

/**
 * Reads a manifest's config_schema. Two forms are accepted: the JSON Schema subset, and the older map of key to
 * description (every setting text; keys ending in api_key, password, secret or token are secrets). The problems
 * name the field, e.g. `config_schema.properties.port.type: ...`.
 */
export function parseConfigSchema(raw: Record<string, unknown>): { schema: ConfigSchema; problems: string[] } {
  if (!('type' in raw) && Object.values(raw).every((value) => typeof value === 'string')) return legacy(raw as Record<string, string>)
  const problems: string[] = []
  const at = (path: string, message: string) => problems.push(`config_schema${path ? `.${path}` : ''}: ${message}`)
  for (const key of Object.keys(raw)) if (!TOP_KEYWORDS.has(key)) at(key, 'not supported (settings are a JSON Schema object of scalar properties)')
  if (raw.type !== 'object') at('type', 'must be "object"')
  if (raw.additionalProperties !== undefined && raw.additionalProperties !== false) at('additionalProperties', 'only false is supported')
  const properties: Record<string, SettingSpec> = {}
  if (!isObject(raw.properties)) at('properties', 'must be an object of settings')
  else {
    for (const [key, value] of Object.entries(raw.properties)) {
      if (!KEY.test(key)) at(`properties.${key}`, 'a setting key is a lowercase letter, then lowercase letters, digits or _, at most 64')
      const spec = parseProperty(value, (field, message) => at(`properties.${key}${field ? `.${field}` : ''}`, message))
      if (spec) properties[key] = spec
    }
  }
  const required = raw.required ?? []
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) at('required', 'must be a list of setting keys')
  else for (const key of required) if (isObject(raw.properties) && !(key in raw.properties)) at('required', `"${key}" is not a property`)
  return { schema: { type: 'object', properties, required: Array.isArray(required) ? (required as string[]) : [] }, problems }
}

function legacy(raw: Record<string, string>): { schema: ConfigSchema; problems: string[] } {
  const problems: string[] = []
  const properties: Record<string, SettingSpec> = {}
  for (const [key, description] of Object.entries(raw)) {
    if (!KEY.test(key)) problems.push(`config_schema.${key}: a setting key is a lowercase letter, then lowercase letters, digits or _, at most 64`)
    properties[key] = { type: 'string', description, ...(LEGACY_SECRET.test(key) ? { writeOnly: true } : {}) }
  }
  return { schema: { type: 'object', properties, required: [] }, problems }
}

function parseProperty(value: unknown, at: (field: string, message: string) => void): SettingSpec | undefined {
  if (!isObject(value)) {
    at('', 'must be an object such as {"type": "string"}')
    return undefined
  }
  for (const key of Object.keys(value)) if (!PROPERTY_KEYWORDS.has(key)) at(key, 'not supported (a setting is a string, number, integer or boolean)')
  if (!SCALAR_TYPES.includes(value.type as SettingType)) {
    at('type', `must be one of ${SCALAR_TYPES.join(', ')}`)
    return undefined
  }
  const spec = { type: value.type } as SettingSpec
  const text = (field: 'title' | 'description' | 'format' | 'pattern') => {
    if (value[field] === undefined) return
    if (typeof value[field] !== 'string') return at(field, 'must be text')
    spec[field] = value[field]
  }
  text('title')
  text('description')
  text('format')
  text('pattern')
  if (spec.pattern !== undefined) {
    try {
      new RegExp(spec.pattern, 'u')
    } catch {
      at('pattern', 'is not a valid regular expression')
    }
  }
  for (const field of ['minimum', 'maximum', 'minLength', 'maxLength'] as const) {
    if (value[field] === undefined) continue
    const n = value[field]
    if (typeof n !== 'number' || !Number.isFinite(n) || (field.endsWith('Length') && (!Number.isInteger(n) || n < 0))) at(field, 'must be a number (a whole one ≥ 0 for lengths)')
    else spec[field] = n
  }
  if (value.writeOnly !== undefined) {
    if (typeof value.writeOnly !== 'boolean') at('writeOnly', 'must be true or false')
    else spec.writeOnly = value.writeOnly
  }
  if (value.enum !== undefined) {
    if (!Array.isArray(value.enum) || value.enum.length === 0) at('enum', 'must be a non-empty list')
    else {
      for (const option of value.enum) if (checkValue(spec, option, false)) at('enum', `${JSON.stringify(option)} is not a ${spec.type}`)
      spec.enum = value.enum as Scalar[]
    }
  }
  if (value.default !== undefined) {
    const wrong = checkValue(spec, value.default)
    if (wrong) at('default', wrong)
    else if (isSecret(spec)) at('default', 'a secret setting cannot have a default: it would sit in the manifest in clear')
    else spec.default = value.default as Scalar
  }
  return spec
}

/** Why `value` does not fit `spec`, or undefined when it does. */
function checkValue(spec: SettingSpec, value: unknown, withRules = true): string | undefined {
  switch (spec.type) {
    case 'boolean':
      if (typeof value !== 'boolean') return 'must be true or false'
      break
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be a ${spec.type === 'integer' ? 'whole number' : 'number'}`
      if (spec.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number'
      if (withRules && spec.minimum !== undefined && value < spec.minimum) return `must be at least ${spec.minimum}`
      if (withRules && spec.maximum !== undefined && value > spec.maximum) return `must be at most ${spec.maximum}`
      break
    case 'string': {
      if (typeof value !== 'string') return 'must be text'
      if (!withRules) break
      const length = [...value].length
      if (spec.minLength !== undefined && length < spec.minLength) return `must be at least ${spec.minLength} characters`
      if (length > (spec.maxLength ?? TEXT_LIMIT)) return `must be at most ${spec.maxLength ?? TEXT_LIMIT} characters`
      if (spec.pattern !== undefined && !new RegExp(spec.pattern, 'u').test(value)) return `must match ${spec.pattern}`
      if (spec.format === 'uri' && !isUri(value)) return 'must be an absolute URI such as https://example.com/'
      if (spec.format === 'email' && !/^[^\s@]+@[^\s@]+$/.test(value)) return 'must be an email address'
      break
    }
  }
  if (withRules && spec.enum && !spec.enum.includes(value as Scalar)) return `must be one of ${spec.enum.map((o) => JSON.stringify(o)).join(', ')}`
  return undefined
}

function isUri(value: string): boolean {
  try {
    return /^[a-z][a-z0-9+.-]*:/i.test(value) && Boolean(new URL(value))
  } catch {
    return false
  }
}

/** A settings write split by where each part goes; `null` clears a setting. */
export interface SettingsWrite {
  values: Record<string, Scalar>
  /** Secrets to set (text) or delete (null); those left out stay as they are. */
  secrets: Record<string, string | null>
}

/**
 * Checks a PUT body against the schema: each error's path is the setting key. Non-secret settings are replaced
 * whole (a key left out falls back to its default); secrets left out are kept, since they are never read back.
 * `present(key)` says whether a key has a value from elsewhere (the environment, or a secret already set).
 */
export function validateSettings(schema: ConfigSchema, body: Record<string, unknown>, present: (key: string) => boolean): { write: SettingsWrite; errors: FieldError[] } {
  const errors: FieldError[] = []
  const write: SettingsWrite = { values: {}, secrets: {} }
  for (const [key, value] of Object.entries(body)) {
    // Own keys only: a body's "__proto__" or "constructor" names no setting, whatever objects inherit.
    const spec = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined
    if (!spec) {
      errors.push({ path: key, message: 'not a setting of this plugin' })
      continue
    }
    if (value === null) {
      if (isSecret(spec)) write.secrets[key] = null
      continue
    }
    const wrong = checkValue(spec, value)
    if (wrong) errors.push({ path: key, message: wrong })
    else if (isSecret(spec)) write.secrets[key] = String(value)
    else Object.defineProperty(write.values, key, { value: value as Scalar, enumerable: true, writable: true, configurable: true })
  }
  for (const key of schema.required) {
    const spec = schema.properties[key]!
    const has = isSecret(spec) ? (write.secrets[key] !== undefined ? write.secrets[key] !== null : present(key)) : key in write.values || spec.default !== undefined || present(key)
    if (!has && !errors.some((e) => e.path === key)) errors.push({ path: key, message: 'is required' })
  }
  return { write, errors }
}

/** Stored settings that still fit the schema (a plugin upgrade may have changed it); the rest are ignored. */
export function storedValues(schema: ConfigSchema | null, stored: Record<string, unknown>): Record<string, Scalar> {
  if (!schema) return {}
  return Object.fromEntries(
    Object.entries(stored).filter(([key, value]) => {
      const spec = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined
      return spec !== undefined && !isSecret(spec) && checkValue(spec, value) === undefined
    }),
  ) as Record<string, Scalar>
}

/** The schema's defaults of non-secret settings. */
export function defaultValues(schema: ConfigSchema | null): Record<string, Scalar> {
  if (!schema) return {}
  return Object.fromEntries(Object.entries(schema.properties).flatMap(([key, spec]) => (spec.default === undefined ? [] : [[key, spec.default]])))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
