import type { FieldError } from '../../errors.ts'
import { verdictOf, type Answered } from '../api-client.ts'

/**
 * How a field is edited. `lines`: a list of strings, one per line. `json`: a nested value edited as JSON text.
 * `checkboxes`: a list of strings chosen from options. `select`: one of the options. `group`: a nested object that
 * may be absent (a channel), edited through its own `fields`.
 */
export type FieldKind = 'text' | 'email' | 'password' | 'number' | 'textarea' | 'checkbox' | 'select' | 'checkboxes' | 'lines' | 'json' | 'tools' | 'group'

export interface Option {
  value: string
  label: string
}

/** A form field of a console page; `name` is the API field it writes, dotted for a nested one (`voice.language`). */
export interface Field {
  name: string
  label: string
  kind?: FieldKind
  required?: boolean
  /** Offered when a record is made, not when it is edited. */
  createOnly?: boolean
  /** Empty means null (clears the value), rather than "leave it out". */
  nullable?: boolean
  help?: string
  /**
   * Which of the page's option lists a select, checkboxes or tools field offers. A tools field's options are
   * servers (`everything`) and their tools (`everything/echo`).
   */
  options?: string
  /** What a select's empty choice says ("(none)" or "(choose)" by default). */
  empty?: string
  /** Attributes for the control itself, e.g. htmx ones to refresh a dependent field. */
  attrs?: Record<string, string>
  /** The heading of the form's part the field stands in; a long form is split where this changes. */
  section?: string
  /** What the API takes an absent value to mean, shown as the field's value then (a channel on by default). */
  fallback?: unknown
  /**
   * A group's fields, named in full (`channels.telegram.bot_token_secret`). The group is left out when none of its
   * text fields is filled and none of its boxes ticked; otherwise it is sent whole.
   */
  fields?: Field[]
  /** Once the record exists: the address of a fragment shown in the group (a channel's webhook and connection check). */
  live?: (id: string) => string
}

/**
 * An agent's MCP servers and tools (AgentConfigRecord.mcp_permissions) as a form edits them: per server, not used,
 * every tool, only the chosen ones (allow), or all but the chosen ones (deny).
 */
export type ToolMode = '' | 'all' | 'only' | 'except'
interface ServerRule {
  allow?: string[]
  deny?: string[]
  /** Tools whose every call waits for a person's yes. */
  approve?: string[]
}

function toolValues(name: string, value: unknown, values: FormValues): void {
  const servers = (value as { servers?: Record<string, ServerRule> } | undefined)?.servers ?? {}
  for (const [server, rule] of Object.entries(servers)) {
    const deny = new Set(rule.deny ?? [])
    // allow and deny together mean "the allowed ones not denied", which `only` shows exactly.
    if (rule.allow) {
      values[`${name}.${server}`] = 'only'
      values[`${name}.${server}.tools`] = rule.allow.filter((t) => !deny.has(t))
    } else if (deny.size > 0) {
      values[`${name}.${server}`] = 'except'
      values[`${name}.${server}.tools`] = [...deny]
    } else values[`${name}.${server}`] = 'all'
    values[`${name}.${server}.approve`] = rule.approve ?? []
  }
}

function toolsFromForm(name: string, form: Record<string, unknown>, values: FormValues): { servers: Record<string, ServerRule> } {
  const servers: Record<string, ServerRule> = {}
  for (const [key, raw] of Object.entries(form)) {
    if (!key.startsWith(`${name}.`) || key.endsWith('.tools') || key.endsWith('.approve')) continue
    const server = key.slice(name.length + 1)
    const mode = (Array.isArray(raw) ? raw[0] : raw) as ToolMode
    const list = (field: string) => {
      const picked = form[`${key}.${field}`]
      return (Array.isArray(picked) ? picked : picked === undefined ? [] : [picked]).filter((t): t is string => typeof t === 'string')
    }
    const tools = list('tools')
    const approve = list('approve')
    values[key] = typeof mode === 'string' ? mode : ''
    values[`${key}.tools`] = tools
    values[`${key}.approve`] = approve
    const asking = approve.length > 0 ? { approve } : {}
    if (mode === 'all') servers[server] = { ...asking }
    else if (mode === 'only') servers[server] = { allow: tools, ...asking }
    else if (mode === 'except') servers[server] = { deny: tools, ...asking }
  }
  return { servers }
}

/**
 * The merge patch (RFC 7396) that turns `before` into `after`: what a form shows whole must also lose what was
 * taken out of it, and a merge patch keeps every key it does not set to null.
 */
export function mergeDiff(before: unknown, after: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
  if (!isObject(before) || !isObject(after)) return after
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null
  for (const [key, value] of Object.entries(after)) patch[key] = mergeDiff(before[key], value)
  return patch
}

/** The fields whose value is a whole nested value, edited as one: saving must replace them, not merge into them. */
export function isWhole(field: Field): boolean {
  return field.kind === 'json' || field.kind === 'tools' || field.kind === 'group'
}

/** An edit's patch with each whole field turned into the merge patch that makes it what the form showed. */
export function replacingWholeFields(fields: readonly Field[], patch: Record<string, unknown>, current: Record<string, unknown>): Record<string, unknown> {
  for (const field of fields.filter(isWhole)) {
    const value = getPath(patch, field.name)
    if (value !== undefined) setPath(patch, field.name, mergeDiff(getPath(current, field.name), value))
  }
  return patch
}

/** A form's raw values as the browser sends them back: text, or the checked values of a group. */
export type FormValues = Record<string, string | string[]>

export interface FormState {
  values: FormValues
  errors: FieldError[]
  message?: string
}

function getPath(record: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), record)
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.')
  let node = target
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[keys.at(-1)!] = value
}

/** A record's values as its form shows them. */
export function formValues(fields: readonly Field[], record: Record<string, unknown>): FormValues {
  const values: FormValues = {}
  for (const field of fields) {
    if (field.kind === 'group') {
      // An absent group's boxes and texts are empty: their fallbacks say what the API assumes inside a group that
      // exists. Its selects show their default, which does not make the group count as filled.
      const absent = getPath(record, field.name) === undefined
      const inner = (field.fields ?? []).map((f) => (absent && f.kind !== 'select' ? { ...f, fallback: undefined } : f))
      Object.assign(values, formValues(inner, record))
      continue
    }
    const value = getPath(record, field.name) ?? field.fallback
    switch (field.kind) {
      case 'checkbox':
        values[field.name] = value === true ? 'on' : ''
        break
      case 'checkboxes':
        values[field.name] = Array.isArray(value) ? value.map(String) : []
        break
      case 'lines':
        values[field.name] = Array.isArray(value) ? value.join('\n') : ''
        break
      case 'json':
        values[field.name] = value === undefined || value === null ? '' : JSON.stringify(value, null, 2)
        break
      case 'password':
        values[field.name] = ''
        break
      case 'tools':
        toolValues(field.name, value, values)
        break
      default:
        values[field.name] = value === undefined || value === null ? '' : String(value)
    }
  }
  return values
}

function text(form: Record<string, unknown>, name: string): string {
  const value = form[name]
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : ''
  return typeof value === 'string' ? value : ''
}

/**
 * Form → API JSON. What cannot even be sent (a number that is not one, JSON that does not parse) comes back as a
 * field error at once, so the API is not asked. On create, empty optional fields are left out so the API's
 * defaults apply; on edit they are sent empty (or null), because a merge patch leaves out what it does not change.
 */
export function formBody(fields: readonly Field[], form: Record<string, unknown>, mode: 'create' | 'edit'): { values: FormValues; json: Record<string, unknown>; errors: FieldError[] } {
  const values: FormValues = {}
  const json: Record<string, unknown> = {}
  const errors: FieldError[] = []
  for (const field of fields) {
    if (mode === 'edit' && field.createOnly) continue
    if (field.kind === 'group') {
      const group = formBody(field.fields ?? [], form, 'create')
      Object.assign(values, group.values)
      errors.push(...group.errors)
      if (isFilled(field.fields ?? [], group.values)) setPath(json, field.name, getPath(group.json, field.name) ?? {})
      // Emptied on edit: the group goes.
      else if (mode === 'edit') setPath(json, field.name, null)
      continue
    }
    if (field.kind === 'tools') {
      setPath(json, field.name, toolsFromForm(field.name, form, values))
      continue
    }
    if (field.kind === 'checkboxes') {
      const raw = form[field.name]
      const chosen = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string')
      values[field.name] = chosen
      setPath(json, field.name, chosen)
      continue
    }
    const value = text(form, field.name)
    values[field.name] = value
    if (field.kind === 'checkbox') {
      setPath(json, field.name, value !== '')
      continue
    }
    const empty = value.trim() === ''
    if (empty && field.kind === 'password') continue
    if (empty && !field.required) {
      // Made: the API's default applies. Edited: a nullable field is cleared (null also removes an optional key
      // from a nested value); a text field is emptied; anything else stays as it was.
      if (mode === 'edit' && field.nullable) setPath(json, field.name, null)
      else if (mode === 'edit' && (field.kind === undefined || field.kind === 'text' || field.kind === 'textarea' || field.kind === 'email')) setPath(json, field.name, '')
      continue
    }
    switch (field.kind) {
      case 'number': {
        const number = Number(value)
        if (empty || !Number.isFinite(number)) errors.push({ path: field.name, message: 'must be a number' })
        else setPath(json, field.name, number)
        break
      }
      case 'lines':
        setPath(json, field.name, value.split(/\r?\n/).map((line) => line.trim()).filter(Boolean))
        break
      case 'json':
        try {
          setPath(json, field.name, JSON.parse(value))
        } catch (error) {
          errors.push({ path: field.name, message: `is not valid JSON: ${(error as Error).message}` })
        }
        break
      default:
        setPath(json, field.name, value)
    }
  }
  return { values, json, errors }
}

/** Whether a group holds anything: a text typed or a box ticked (a select's choice alone does not count). */
export function isFilled(fields: readonly Field[], values: FormValues): boolean {
  return fields.some((field) => field.kind !== 'select' && typeof values[field.name] === 'string' && (values[field.name] as string).trim() !== '')
}

/** A refused form's message; the fields it means are marked, and listed where the form can link to them. */
export const CORRECT_FIELDS = 'Please correct the marked fields.'

/** What the API said went wrong, in the words a form shows. */
export function refusal(values: FormValues, answer: Answered): FormState {
  const { status, problem } = verdictOf(answer)
  const errors: FieldError[] = problem.errors ?? []
  if (status === 412) {
    return { values, errors, message: 'This record was changed by someone else (or in another tab) since you opened it. Reload it to see their changes, then make yours again.' }
  }
  const fieldsMarked = errors.some((e) => e.path !== '(body)')
  return { values, errors, message: fieldsMarked ? CORRECT_FIELDS : (problem.detail ?? `The request failed (${status}).`) }
}

/** The errors of one field: its own, and those of anything inside it (`env.API_KEY` belongs to `env`). */
export function errorsOf(errors: readonly FieldError[], name: string): FieldError[] {
  return errors.filter((e) => e.path === name || e.path.startsWith(`${name}.`) || e.path.startsWith(`${name}[`))
}
