/** @jsxImportSource hono/jsx */
import type { Hono, MiddlewareHandler } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { isUuid } from '../../models/fields.ts'
import { problemText, type ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { CORRECT_FIELDS, formBody, formValues, isWhole, refusal, replacingWholeFields, type FormState, type FormValues, type Option } from './form.ts'
import { DeleteForm, ListPage, RecordForm, RecordPage, Rows, type Listing, type May } from './pages.tsx'
import { PAGE_SIZE, isFragment, pageOf, recordPath, rowOf, versionOf, versionTag, type ConsoleResource, type Ctx, type Row } from './resource.ts'

async function listing(c: Ctx, api: ApiClient, resource: ConsoleResource): Promise<Listing> {
  const q = c.req.query('q')?.trim() ?? ''
  const offset = Math.max(0, Number.parseInt(c.req.query('offset') ?? '0', 10) || 0)
  // Only a column the page shows orders it; anything else asked for is the default order.
  const sort = resource.columns.find((column) => column.field === c.req.query('sort') && column.sortable !== false)?.field ?? resource.search.field
  const dir = c.req.query('dir') === 'desc' ? 'desc' : 'asc'
  // Ties (many rows switched on) keep one order from page to page: the search field, then the id.
  const order = [`${sort}.${dir}`, ...(sort === resource.search.field ? [] : [`${resource.search.field}.asc`]), 'id.asc'].join(',')
  const query = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset), count: 'exact', order })
  // The search text is the user's: PostgREST-style patterns take * as the wildcard, so theirs are matched literally.
  if (q) query.set(resource.search.field, `ilike.*${q.replaceAll('*', '')}*`)
  const reply = await api.call(c, 'GET', `/api/v1/${encodeURIComponent(resource.model)}?${query}`)
  if (reply.status !== 200) throw new PageRefusal(reply.status, problemText(reply, `Listing ${resource.title.toLowerCase()}`))
  // count=exact was asked for; without it, the rows shown are all there is to count.
  const { data, count = offset + data.length } = pageOf(reply.body)
  return { rows: data, count, offset, q, sort, dir, mayCreate: allows(reply.headers, 'POST') }
}

/** Whether the API's Allow header offers `method`: what the signed-in person's role may do here. */
function allows(headers: Headers, method: string): boolean {
  return (headers.get('allow') ?? '').split(',').some((m) => m.trim() === method)
}

/** The API refused what a page needed to show: the page says why, with the API's status. */
export class PageRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** The API's status for the page's answer: what the API refused is refused here too, and a test can see which. */
function statusOf(status: number): ContentfulStatusCode {
  return (status >= 400 && status < 600 ? status : 422) as ContentfulStatusCode
}

/** Mounts the list, new, record and delete pages of a resource; every read and write goes through the public API. */
export function mountConsoleResource(app: Hono<AdminEnv>, api: ApiClient, resource: ConsoleResource): void {
  const { path, model } = resource
  const options = (c: Ctx, values: FormValues): Promise<Record<string, Option[]>> => resource.options?.(c, api, values) ?? Promise.resolve({})

  // Before the record routes, whose id check would take `/agents/model-field` for a malformed id.
  resource.mountExtra?.(app, api)

  // An id becomes a path segment of an API call, so only a UUID is one: `..%2FCompany%2F<id>` would otherwise make
  // this page fetch another model's record.
  const onlyRecordIds: MiddlewareHandler<AdminEnv> = async (c, next) => (c.req.param('id') === 'new' || isUuid(c.req.param('id') ?? '') ? next() : c.notFound())
  // `:id/*` names `:id` too.
  app.use(`${path}/:id/*`, onlyRecordIds)

  const render = async (
    c: Ctx,
    row: Row | undefined,
    version: string,
    extra: { form?: FormState; notice?: string; status?: ContentfulStatusCode; deleteProblem?: string; may?: May } = {},
  ) => {
    const values = formValues(resource.fields, row ?? resource.defaults ?? {})
    const may = extra.may ?? { edit: true, delete: true }
    const [choices, panels] = await Promise.all([options(c, extra.form?.values ?? values), row && resource.panels ? resource.panels(c, api, row, may.edit) : undefined])
    if (extra.status) c.status(extra.status)
    return c.render(<RecordPage resource={resource} row={row} version={version} values={values} options={choices} panels={panels} {...extra} may={may} />, {
      title: row ? `${resource.title}: ${resource.nameOf(row)}` : `New ${resource.singular}`,
    })
  }

  const read = async (c: Ctx, id: string) => {
    const reply = await api.call(c, 'GET', recordPath(model, id))
    const row = reply.status === 200 ? rowOf(reply.body) : undefined
    if (!row) throw new PageRefusal(reply.status, reply.status === 404 ? `No ${resource.singular} has this id.` : problemText(reply, `Reading the ${resource.singular}`))
    return { row, version: versionOf(reply.headers.get('etag')), may: { edit: allows(reply.headers, 'PATCH'), delete: allows(reply.headers, 'DELETE') } }
  }

  app.get(path, async (c) => {
    const list = await listing(c, api, resource)
    if (isFragment(c)) return c.html(<Rows resource={resource} listing={list} />)
    return c.render(<ListPage resource={resource} listing={list} notice={c.req.query('deleted') === '1' ? `The ${resource.singular} is deleted.` : undefined} />, { title: resource.title })
  })

  app.get(`${path}/new`, (c) => render(c, undefined, ''))

  app.post(path, async (c) => {
    const { values, json, errors } = formBody(resource.fields, await c.req.parseBody({ all: true }), 'create')
    const reply = errors.length ? undefined : await api.call(c, 'POST', `/api/v1/${encodeURIComponent(model)}`, json)
    const created = reply?.status === 201 ? rowOf(reply.body) : undefined
    if (created) {
      const to = `${path}/${String(created.id)}?created=1`
      if (!isFragment(c)) return c.redirect(to, 303)
      c.header('HX-Redirect', to)
      return c.body(null, 201)
    }
    const form = reply ? refusal(values, reply) : { values, errors, message: CORRECT_FIELDS }
    const status = statusOf(reply?.status ?? 422)
    if (isFragment(c)) return c.html(<RecordForm resource={resource} values={values} form={form} options={await options(c, values)} />, status)
    return render(c, undefined, '', { form, status })
  })

  app.get(`${path}/:id`, async (c) => {
    const { row, version, may } = await read(c, c.req.param('id'))
    return render(c, row, version, { may, notice: c.req.query('created') ? `Created ${resource.singular} ${resource.nameOf(row)}.` : undefined })
  })

  app.post(`${path}/:id`, async (c) => {
    const id = c.req.param('id')
    const posted = await c.req.parseBody({ all: true })
    const version = typeof posted._version === 'string' ? posted._version : ''
    const { values, json, errors } = formBody(resource.fields, posted, 'edit')
    let reply
    if (errors.length === 0) {
      // A nested value edited whole must lose what the form took out of it; the record as it is now says what that
      // is. Read at another version, it makes no difference: If-Match refuses the save anyway.
      const before = resource.fields.some(isWhole) ? await api.call(c, 'GET', recordPath(model, id)) : undefined
      const current = before?.status === 200 ? rowOf(before.body) : undefined
      const patch = current ? replacingWholeFields(resource.fields, json, current) : json
      reply = await api.call(c, 'PATCH', recordPath(model, id), patch, { ifMatch: versionTag(version) })
    }
    const saved = reply?.status === 200 ? rowOf(reply.body) : undefined
    if (reply && saved) {
      const savedVersion = versionOf(reply.headers.get('etag'))
      const notice = `Saved ${resource.singular} ${resource.nameOf(saved)}.`
      if (isFragment(c)) {
        // The delete form carries the version too: it is brought up to date beside the form.
        return c.html(
          <>
            <RecordForm resource={resource} id={id} version={savedVersion} values={formValues(resource.fields, saved)} options={await options(c, formValues(resource.fields, saved))} notice={notice} />
            <DeleteForm resource={resource} id={id} version={savedVersion} name={resource.nameOf(saved)} outOfBand />
          </>,
        )
      }
      return render(c, saved, savedVersion, { notice })
    }
    const form = reply ? refusal(values, reply) : { values, errors, message: CORRECT_FIELDS }
    const status = statusOf(reply?.status ?? 422)
    if (isFragment(c)) return c.html(<RecordForm resource={resource} id={id} version={version} values={values} form={form} options={await options(c, values)} />, status)
    const current = await read(c, id).catch(() => undefined)
    return render(c, current?.row ?? { id }, version, { form, status, may: current?.may })
  })

  app.post(`${path}/:id/delete`, async (c) => {
    const id = c.req.param('id')
    const posted = await c.req.parseBody()
    const version = typeof posted._version === 'string' ? posted._version : ''
    const name = typeof posted._name === 'string' ? posted._name : id
    // Only a flag travels in the address: a name there could be made to say anything on this page.
    const reply = await api.call(c, 'DELETE', recordPath(model, id), undefined, { ifMatch: versionTag(version) })
    if (reply.status === 204) {
      const to = `${path}?deleted=1`
      if (!isFragment(c)) return c.redirect(to, 303)
      c.header('HX-Redirect', to)
      return c.body(null, 200)
    }
    const problem = refusal({}, reply).message
    if (isFragment(c)) return c.html(<DeleteForm resource={resource} id={id} version={version} name={name} problem={problem} />, statusOf(reply.status))
    const current = await read(c, id)
    return render(c, current.row, current.version, { deleteProblem: problem, status: statusOf(reply.status), may: current.may })
  })

}
