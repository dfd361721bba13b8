/** @jsxImportSource hono/jsx */
import type { FieldError } from '../../errors.ts'
import { errorsOf, isFilled, type Field, type FormValues, type Option, type ToolMode } from './form.ts'

/** Ids unique on the page: a form's prefix and the field's name (dots are not welcome in CSS selectors). */
export function fieldId(prefix: string, name: string): string {
  return `${prefix}-${name.replaceAll('.', '-')}`
}

function FieldErrors({ id, errors }: { id: string; errors: FieldError[] }) {
  if (errors.length === 0) return null
  return (
    <span class="field-error" id={`${id}-error`}>
      {errors.map((e) => (e.path.includes('.') || e.path.includes('[') ? `${e.path}: ${e.message}` : e.message)).join('; ')}
    </span>
  )
}

/** One field with its label, help and errors, wired for screen readers (aria-invalid, aria-describedby). */
export function FormField({ field, values, errors, prefix, options = {}, recordId }: { field: Field; values: FormValues; errors: FieldError[]; prefix: string; options?: Record<string, Option[]>; recordId?: string }) {
  const id = fieldId(prefix, field.name)
  const mine = errorsOf(errors, field.name)
  const invalid = mine.length > 0 ? 'true' : undefined
  const described = [mine.length ? `${id}-error` : '', field.help ? `${id}-help` : ''].filter(Boolean).join(' ') || undefined
  const value = values[field.name]
  const text = typeof value === 'string' ? value : ''
  const help = field.help ? <span class="help" id={`${id}-help`}>{field.help}</span> : null
  const choices = field.options ? (options[field.options] ?? []) : []

  if (field.kind === 'checkbox') {
    return (
      <div class="field checkbox">
        <input id={id} name={field.name} type="checkbox" checked={text !== ''} aria-invalid={invalid} aria-describedby={described} />
        <label for={id}>{field.label}</label>
        {help}
        <FieldErrors id={id} errors={mine} />
      </div>
    )
  }
  if (field.kind === 'group') return <Group field={field} values={values} errors={errors} prefix={prefix} options={options} recordId={recordId} />
  if (field.kind === 'tools') return <ToolsPicker field={field} values={values} errors={mine} id={id} choices={choices} />
  if (field.kind === 'checkboxes') {
    const chosen = new Set(Array.isArray(value) ? value : [])
    // A value chosen earlier that is no longer offered stays visible, so saving does not drop it unseen.
    const shown = [...choices, ...[...chosen].filter((v) => !choices.some((o) => o.value === v)).map((v) => ({ value: v, label: `${v} (not available)` }))]
    return (
      <fieldset class="field checkboxes" aria-describedby={described}>
        <legend>{field.label}</legend>
        {shown.length === 0 ? <span class="help">Nothing to choose from yet.</span> : null}
        {shown.map((option, index) => (
          <div class="checkbox">
            <input id={`${id}-${index}`} name={field.name} type="checkbox" value={option.value} checked={chosen.has(option.value)} />
            <label for={`${id}-${index}`}>{option.label}</label>
          </div>
        ))}
        {help}
        <FieldErrors id={id} errors={mine} />
      </fieldset>
    )
  }
  let control
  if (field.kind === 'select') {
    const known = choices.some((o) => o.value === text)
    control = (
      <select id={id} name={field.name} required={field.required} aria-invalid={invalid} aria-describedby={described} {...field.attrs}>
        {field.required && known ? null : <option value="">{field.empty ?? (field.nullable ? '(none)' : '(choose)')}</option>}
        {!known && text !== '' ? <option value={text} selected>{`${text} (not available)`}</option> : null}
        {choices.map((option) => (
          <option value={option.value} selected={option.value === text}>
            {option.label}
          </option>
        ))}
      </select>
    )
  } else if (field.kind === 'textarea' || field.kind === 'json' || field.kind === 'lines') {
    control = (
      <textarea id={id} name={field.name} rows={field.kind === 'textarea' ? 6 : 4} required={field.required} aria-invalid={invalid} aria-describedby={described} class={field.kind === 'json' ? 'code' : undefined}>
        {text}
      </textarea>
    )
  } else {
    const type = field.kind === 'number' ? 'text' : (field.kind ?? 'text')
    control = (
      <input
        id={id}
        name={field.name}
        type={type}
        inputmode={field.kind === 'number' ? 'decimal' : undefined}
        value={field.kind === 'password' ? '' : text}
        required={field.required}
        autocomplete={field.kind === 'password' ? 'new-password' : undefined}
        aria-invalid={invalid}
        aria-describedby={described}
        {...field.attrs}
      />
    )
  }
  return (
    <div class="field" id={`${id}-field`}>
      <label for={id}>{field.label}</label>
      {control}
      {help}
      <FieldErrors id={id} errors={mine} />
    </div>
  )
}

/**
 * A nested object that may be absent, such as one channel: its fields together, folded away while the group is
 * empty (five channels' fields would otherwise fill the page), with what the record's page can tell about it
 * (loaded after the page, since it may ask another service).
 */
function Group({ field, values, errors, prefix, options, recordId }: { field: Field; values: FormValues; errors: FieldError[]; prefix: string; options: Record<string, Option[]>; recordId?: string }) {
  const id = fieldId(prefix, field.name)
  const inner = field.fields ?? []
  const filled = isFilled(inner, values)
  const controls = inner.map((f) => <FormField field={f} values={values} errors={errors} prefix={prefix} options={options} />)
  return (
    <fieldset class="field group" id={`${id}-field`} aria-describedby={field.help ? `${id}-help` : undefined}>
      <legend>{field.label}</legend>
      {field.help ? (
        <span class="help" id={`${id}-help`}>
          {field.help}
        </span>
      ) : null}
      {filled || errorsOf(errors, field.name).length > 0 ? (
        controls
      ) : (
        <details>
          <summary>Set up {field.label}</summary>
          {controls}
        </details>
      )}
      {recordId && field.live && filled ? <div class="group-live" id={`${id}-live`} hx-get={field.live(recordId)} hx-trigger="load" hx-swap="innerHTML" aria-live="polite" /> : null}
    </fieldset>
  )
}

const TOOL_MODES: Array<{ value: ToolMode; label: string }> = [
  { value: '', label: 'Not used' },
  { value: 'all', label: 'Every tool' },
  { value: 'only', label: 'Only the tools ticked' },
  { value: 'except', label: 'Every tool but those ticked' },
]

/**
 * The servers of the gateway's catalogue, each with how the agent may use it and its tools to tick. A server the
 * record names that the catalogue lacks (unreachable now, or removed) is kept as it is, with its tools.
 */
function ToolsPicker({ field, values, errors, id, choices }: { field: Field; values: FormValues; errors: FieldError[]; id: string; choices: Option[] }) {
  const servers = choices.filter((o) => !o.value.includes('/'))
  const named = Object.keys(values)
    .filter((key) => key.startsWith(`${field.name}.`) && !key.endsWith('.tools') && !key.endsWith('.approve'))
    .map((key) => key.slice(field.name.length + 1))
  const all = [...servers, ...named.filter((s) => !servers.some((o) => o.value === s)).map((s) => ({ value: s, label: `${s} (not in the catalogue now)` }))]
  return (
    <fieldset class="field tools">
      <legend>{field.label}</legend>
      {field.help ? <span class="help">{field.help}</span> : null}
      {all.length === 0 ? <span class="help">No MCP server or tool plugin is available to this company yet.</span> : null}
      {all.map((server, index) => {
        const key = `${field.name}.${server.value}`
        const mode = typeof values[key] === 'string' ? (values[key] as string) : ''
        const ticked = new Set(Array.isArray(values[`${key}.tools`]) ? (values[`${key}.tools`] as string[]) : [])
        const asking = new Set(Array.isArray(values[`${key}.approve`]) ? (values[`${key}.approve`] as string[]) : [])
        const offered = choices.filter((o) => o.value.startsWith(`${server.value}/`)).map((o) => ({ name: o.value.slice(server.value.length + 1), label: o.label }))
        const known = (t: string) => offered.some((o) => o.name === t)
        const tools = [...offered, ...[...new Set([...ticked, ...asking])].filter((t) => !known(t)).map((t) => ({ name: t, label: t }))]
        return (
          <div class="tool-server">
            <label for={`${id}-${index}`}>{server.label}</label>
            <select id={`${id}-${index}`} name={key}>
              {TOOL_MODES.map((m) => (
                <option value={m.value} selected={m.value === mode}>
                  {m.label}
                </option>
              ))}
            </select>
            {tools.length > 0 ? (
              <div class="tool-list" role="group" aria-label={`Tools of ${server.value}`}>
                {tools.map((tool, t) => (
                  <span class="checkbox">
                    <input id={`${id}-${index}-${t}`} name={`${key}.tools`} type="checkbox" value={tool.name} checked={ticked.has(tool.name)} />
                    <label for={`${id}-${index}-${t}`}>{tool.label}</label>
                  </span>
                ))}
              </div>
            ) : null}
            {tools.length > 0 ? (
              <div class="tool-list" role="group" aria-label={`Tools of ${server.value} that ask a person first`}>
                <span class="help">Ask a person before each call of:</span>
                {tools.map((tool, t) => (
                  <span class="checkbox">
                    <input id={`${id}-${index}-ask-${t}`} name={`${key}.approve`} type="checkbox" value={tool.name} checked={asking.has(tool.name)} />
                    <label for={`${id}-${index}-ask-${t}`}>{tool.label}</label>
                  </span>
                ))}
              </div>
            ) : null}
          </div>
        )
      })}
      <FieldErrors id={id} errors={errors} />
    </fieldset>
  )
}
