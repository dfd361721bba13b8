/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { FieldError } from '../../errors.ts'
import { fieldId } from '../console/fields.tsx'
import { errorsOf } from '../console/form.ts'

// What the console, the portal and the sign-in pages tell people, in one way each: a notice is announced politely
// (role=status), a failure at once (role=alert); each renders nothing when there is nothing to say.

/** What to say: a text, or markup with a link or emphasis in it. */
type Said = { text?: string; children?: Child }

/** Something done, said where the person is looking. */
export function Notice({ text, children }: Said) {
  if (!text && !children) return null
  return (
    <p class="notice" role="status">
      {text ?? children}
    </p>
  )
}

/** What failed, said where the person is looking, and announced. */
export function Alert({ text, children }: Said) {
  if (!text && !children) return null
  return (
    <p class="problem" role="alert">
      {text ?? children}
    </p>
  )
}

interface Named {
  name: string
  label?: string
  fields?: readonly Named[]
}

/** The fields a list names, a group's own fields in its place, each with its group's label before its own. */
function flattened(fields: readonly Named[], within = ''): Array<{ name: string; label: string }> {
  return fields.flatMap((f) => (f.fields ? flattened(f.fields, `${within}${f.label ?? f.name} › `) : [{ name: f.name, label: `${within}${f.label ?? f.name}` }]))
}

/**
 * A form's message, the fields to correct (with `prefix`, the form's id prefix: each a link to its field, which a
 * long form needs), and the errors that belong to none of its fields (the body as a whole, or an unseen field).
 */
export function Problem({ message, errors = [], fields = [], prefix }: { message?: string; errors?: readonly FieldError[]; fields?: readonly Named[]; prefix?: string }) {
  const loose = errors.filter((e) => !fields.some((f) => errorsOf([e], f.name).length > 0))
  const marked = prefix ? flattened(fields).filter((f) => errorsOf(errors, f.name).length > 0) : []
  if (!message && loose.length === 0) return null
  return (
    <div class="problem" role="alert">
      {message}
      {marked.length > 0 ? (
        <ul class="marked-fields">
          {marked.map((f) => (
            <li>
              <a href={`#${fieldId(prefix!, f.name)}`}>{f.label}</a>
            </li>
          ))}
        </ul>
      ) : null}
      {loose.map((e) => (
        <div>{e.path === '(body)' ? e.message : `${e.path}: ${e.message}`}</div>
      ))}
    </div>
  )
}
