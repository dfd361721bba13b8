/** @jsxImportSource hono/jsx */
import type { Context, Hono, MiddlewareHandler } from 'hono'
import type { FieldError } from '../../errors.ts'
import type { ApiClient, ApiReply } from '../api-client.ts'
import { CreateForm, EditRow, RecordRow, ResourcePage, Rows, type FormState, type Listing } from '../components/resource.tsx'
import type { AdminEnv } from '../context.ts'
import { PAGE_SIZE, type Resource } from './resource.ts'
import { isUuid } from '../../models/fields.ts'

type Ctx = Context<AdminEnv>

/** One record's API path. Ids are checked to be UUIDs first (see mountResource); encoding is the second guard. */
function recordPath(model: string, id: string): string {
  return `/api/v1/${encodeURIComponent(model)}/${encodeURIComponent(id)}`
}

/** A fragment for htmx, the whole page for a plain browser request. */
function isFragment(c: Ctx): boolean {
  return c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'
}

/** What the API said went wrong, in the words a form shows. */
function formState(values: Record<string, string>, reply: ApiReply): FormState {
  const problem = reply.body ?? {}
  const errors: FieldError[] = Array.isArray(problem.errors) ? problem.errors : []
  const fieldsMarked = errors.some((e) => e.path !== '(body)')
  return { values, errors, message: fieldsMarked ? 'Please correct the fields marked above.' : (problem.detail ?? `The request failed (${reply.status}).`) }
}

/** Form text → API JSON: empty optional fields are left out, so the API's defaults apply. */
function formBody(resource: Resource, form: Record<string, unknown>, mode: 'create' | 'edit'): { values: Record<string, string>; json: Record<string, string> } {
  const values: Record<string, string> = {}
  const json: Record<string, string> = {}
  for (const field of resource.fields) {
    if (mode === 'edit' && field.createOnly) continue
    const value = typeof form[field.name] === 'string' ? (form[field.name] as string) : ''
    values[field.name] = value
    if (value !== '' || (field.required && mode === 'create')) json[field.name] = value
  }
  return { values, json }
}

async function listing(c: Ctx, api: ApiClient, resource: Resource): Promise<Listing> {
  const q = c.req.query('q')?.trim() ?? ''
  const offset = Math.max(0, Number.parseInt(c.req.query('offset') ?? '0', 10) || 0)
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset), count: 'exact', order: `${resource.search.field}.asc` })
  if (q) query.set(resource.search.field, `ilike.*${q}*`)
  const reply = await api.call(c, 'GET', `/api/v1/${encodeURIComponent(resource.model)}?${query}`)
  if (reply.status !== 200) throw new Error(reply.body?.detail ?? `Listing ${resource.title} failed (${reply.status}).`)
  return { rows: reply.body.data, count: reply.body.count, offset, q }
}

/** Mounts one console page over a model; every read and write goes through the public API as the signed-in user. */
export function mountResource(app: Hono<AdminEnv>, api: ApiClient, resource: Resource): void {
  const { path, model } = resource

  // An id becomes a path segment of an API call, so only a UUID is one: `..%2FCompany%2F<id>` would otherwise
  // make this page fetch another model's record.
  const onlyRecordIds: MiddlewareHandler<AdminEnv> = async (c, next) => {
    if (isUuid(c.req.param('id') ?? '')) return next()
    if (c.req.header('hx-request') === 'true') return c.html(<tr><td class="problem">No {resource.singular} has this id.</td></tr>, 404)
    return c.notFound()
  }
  app.use(`${path}/:id`, onlyRecordIds)
  app.use(`${path}/:id/*`, onlyRecordIds)

  app.get(path, async (c) => {
    const list = await listing(c, api, resource)
    if (isFragment(c)) return c.html(<Rows resource={resource} listing={list} />)
    return c.render(<ResourcePage resource={resource} listing={list} />, { title: resource.title })
  })

  app.post(path, async (c) => {
    const { values, json } = formBody(resource, await c.req.parseBody(), 'create')
    const reply = await api.call(c, 'POST', `/api/v1/${encodeURIComponent(model)}`, json)
    if (reply.status === 201) {
      if (!isFragment(c)) return c.redirect(path, 303)
      const list = await listing(c, api, resource)
      return c.html(
        <>
          <CreateForm resource={resource} created={resource.nameOf(reply.body)} />
          <Rows resource={resource} listing={list} outOfBand />
        </>,
      )
    }
    const form = formState(values, reply)
    c.status(reply.status === 422 || reply.status === 409 ? 422 : 400)
    if (isFragment(c)) return c.html(<CreateForm resource={resource} form={form} />)
    return c.render(<ResourcePage resource={resource} listing={await listing(c, api, resource)} form={form} />, { title: resource.title })
  })

  app.get(`${path}/:id/edit`, async (c) => {
    const reply = await api.call(c, 'GET', recordPath(model, c.req.param('id')))
    if (reply.status !== 200) return c.html(<tr><td class="problem">{reply.body?.detail}</td></tr>, 404)
    return c.html(<EditRow resource={resource} row={reply.body} />)
  })

  app.get(`${path}/:id/row`, async (c) => {
    const reply = await api.call(c, 'GET', recordPath(model, c.req.param('id')))
    if (reply.status !== 200) return c.html(<tr><td class="problem">{reply.body?.detail}</td></tr>, 404)
    return c.html(<RecordRow resource={resource} row={reply.body} />)
  })

  app.patch(`${path}/:id`, async (c) => {
    const id = c.req.param('id')
    const { values, json } = formBody(resource, await c.req.parseBody(), 'edit')
    const reply = await api.call(c, 'PATCH', recordPath(model, id), json)
    if (reply.status === 200) return c.html(<RecordRow resource={resource} row={reply.body} />)
    return c.html(<EditRow resource={resource} row={{ id }} form={formState(values, reply)} />, 422)
  })

  app.delete(`${path}/:id`, async (c) => {
    const id = c.req.param('id')
    const reply = await api.call(c, 'DELETE', recordPath(model, id))
    if (reply.status === 204) return c.body('', 200)
    const row = await api.call(c, 'GET', recordPath(model, id))
    if (row.status !== 200) return c.body('', 200)
    return c.html(<RecordRow resource={resource} row={row.body} message={reply.body?.detail} />, 409)
  })
}
