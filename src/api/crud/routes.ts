import { createRoute, z } from '@hono/zod-openapi'
import type { Model } from '../../models/define.ts'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../models/list-query.ts'
import { IdParam } from '../params.ts'
import { requireJson } from '../json-body.ts'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const etag = { ETag: { schema: { type: 'string' as const }, description: 'Version of the record; send it back in If-Match.' } }
const allow = (what: string) => ({
  Allow: {
    schema: { type: 'string' as const },
    description: `The methods your role may use on ${what}, e.g. \`GET, HEAD, PATCH, PUT, DELETE\`: a client offers only those (a rule about the record itself may still refuse one).`,
  },
})
const ifMatch = z.object({
  'if-match': z.string().optional().openapi({
    description: 'Only write if the record is still at this version (its ETag); otherwise 412.',
    example: '"3"',
  }),
})
// Query values are read by the list parser (repeated filters such as a date range are allowed), so the schema
// here documents them without constraining their shape.
const text = (description: string, example?: string) => z.any().optional().openapi({ type: 'string', description, example })

function listQuery(model: Model) {
  const filters = Object.fromEntries(
    [...model.kinds].map(([name, kind]) => [
      name,
      text(
        kind === 'json'
          ? `Filter: is.null only (JSON field).`
          : `Filter as operator.value: eq, neq, gt, gte, lt, lte${kind === 'text' ? ', like, ilike (* is a wildcard)' : ''}, in.(a,b), is.null${kind === 'boolean' ? '|true|false' : ''}. May repeat.`,
      ),
    ]),
  )
  return z.object({
    select: text('Comma-separated fields to return.', 'id,created_at'),
    order: text('Comma-separated field.asc or field.desc; ties are broken by id.', 'created_at.desc'),
    limit: text(`Rows per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`, '50'),
    offset: text('Rows to skip (default 0).', '0'),
    count: text('`exact` adds the total number of matching rows as `count`.', 'exact'),
    ...filters,
  })
}


/** The six generic CRUD routes of one model, each with its own schemas, so typed clients get a method per model. */
export function crudRoutes(model: Model) {
  const name = model.name
  const collection = `/api/v1/${name}`
  const item = `/api/v1/${name}/{id}`
  const tags = [name]
  const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } })
  const list = z
    .object({
      data: z.array(model.record),
      limit: z.int(),
      offset: z.int(),
      count: z.int().optional().openapi({ description: 'Total matching rows; present with count=exact.' }),
    })
    .openapi(`${name}List`)

  return {
    list: createRoute({
      method: 'get',
      path: collection,
      operationId: `list${name}`,
      summary: `List ${name} records`,
      tags,
      security: signedIn,
      request: { query: listQuery(model) },
      responses: { 200: { ...json(list, `A page of ${name} records.`), headers: allow('the collection') }, ...commonErrors },
    }),
    read: createRoute({
      method: 'get',
      path: item,
      operationId: `get${name}`,
      summary: `Read one ${name}`,
      tags,
      security: signedIn,
      request: { params: IdParam },
      responses: {
        200: { ...json(model.record, `The ${name}.`), headers: { ...etag, ...allow('the record') } },
        304: { description: 'Unchanged since the ETag sent in If-None-Match.' },
        ...commonErrors,
        ...notFoundError,
      },
    }),
    create: createRoute({
      method: 'post',
      path: collection,
      operationId: `create${name}`,
      summary: `Create a ${name}`,
      tags,
      security: signedIn,
      middleware: [requireJson] as const,
      request: { body: { required: true, content: { 'application/json': { schema: model.create } } } },
      responses: {
        201: {
          ...json(model.created, `The new ${name}.`),
          headers: { ...etag, Location: { schema: { type: 'string' }, description: 'Address of the new record.' } },
        },
        ...commonErrors,
        ...validationErrors,
        ...conflictErrors,
      },
    }),
    replace: createRoute({
      method: 'put',
      path: item,
      operationId: `replace${name}`,
      summary: `Replace a ${name}`,
      description: 'Every writable field is set; a field left out takes its default.',
      tags,
      security: signedIn,
      middleware: [requireJson] as const,
      request: {
        params: IdParam,
        headers: ifMatch,
        body: { required: true, content: { 'application/json': { schema: model.create } } },
      },
      responses: {
        200: { ...json(model.record, `The replaced ${name}.`), headers: etag },
        ...commonErrors,
        ...notFoundError,
        ...validationErrors,
        ...conflictErrors,
      },
    }),
    patch: createRoute({
      method: 'patch',
      path: item,
      operationId: `patch${name}`,
      summary: `Change some fields of a ${name}`,
      tags,
      security: signedIn,
      middleware: [requireJson] as const,
      request: {
        params: IdParam,
        headers: ifMatch,
        body: {
          required: true,
          content: {
            'application/merge-patch+json': { schema: model.patch },
            'application/json': { schema: model.patch },
          },
        },
      },
      responses: {
        200: { ...json(model.record, `The changed ${name}.`), headers: etag },
        ...commonErrors,
        ...notFoundError,
        ...validationErrors,
        ...conflictErrors,
      },
    }),
    remove: createRoute({
      method: 'delete',
      path: item,
      operationId: `delete${name}`,
      summary: `Delete a ${name}`,
      tags,
      security: signedIn,
      request: { params: IdParam, headers: ifMatch },
      responses: { 204: { description: 'Deleted.' }, ...commonErrors, ...notFoundError, ...conflictErrors },
    }),
  }
}
