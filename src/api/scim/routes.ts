import { createRoute, z } from '@hono/zod-openapi'
import { IdParam } from '../params.ts'
import { ProblemSchema, publicErrors } from '../responses.ts'

export const SCIM_BASE = '/scim/v2'
export const scimToken: Array<Record<string, string[]>> = [{ scimToken: [] }]

const SCIM = 'application/scim+json'
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

/** A SCIM resource or message, as RFC 7643 shapes it: described, and read by the handlers field by field. */
const Resource = (name: string, description: string) => z.looseObject({ schemas: z.array(z.string()).optional() }).openapi(name, { description })

const UserResource = Resource('ScimUser', 'A SCIM User (urn:ietf:params:scim:schemas:core:2.0:User): userName, name, displayName, emails, active, externalId; groups read-only.')
const GroupResource = Resource('ScimGroup', 'A SCIM Group (urn:ietf:params:scim:schemas:core:2.0:Group): displayName, members ({value: user id}), externalId.')
const PatchOp = Resource('ScimPatchOp', 'A PATCH (urn:ietf:params:scim:api:messages:2.0:PatchOp): Operations of {op: add|replace|remove, path, value}.')
const ListResponse = Resource('ScimListResponse', 'A page of resources: totalResults, startIndex (from 1), itemsPerPage, Resources.')

const ListQuery = z.object({
  filter: z.string().max(1000).optional().openapi({ description: 'Comparisons (eq, ne, co, sw, ew) joined by and, e.g. userName eq "ada@example.com".' }),
  startIndex: z.coerce.number().int().min(1).optional().openapi({ description: 'The first result, from 1.' }),
  count: z.coerce.number().int().min(0).optional().openapi({ description: 'How many at most (200 at most; 100 by default).' }),
  attributes: z.string().max(1000).optional(),
  excludedAttributes: z.string().max(1000).optional().openapi({ description: '`members` leaves groups’ members out.' }),
})

const errors = {
  ...publicErrors,
  401: problem('No SCIM token, or one that is revoked.'),
  429: problem('Over the request throttle; see Retry-After.'),
}
const json = (schema: z.ZodType, description: string) => ({ description, content: { [SCIM]: { schema } } })
const body = (schema: z.ZodType) => ({ body: { required: true, content: { [SCIM]: { schema }, 'application/json': { schema } } } })
const tags = ['SCIM']

function resourceRoutes(kind: 'Users' | 'Groups', schema: z.ZodType) {
  const one = kind === 'Users' ? 'user' : 'group'
  return {
    list: createRoute({ method: 'get', path: `${SCIM_BASE}/${kind}`, operationId: `scimList${kind}`, summary: `List the company’s ${kind.toLowerCase()}`, tags, security: scimToken, request: { query: ListQuery }, responses: { 200: json(ListResponse, 'A page.'), ...errors, 400: problem('The filter is not one this server reads (scimType invalidFilter).') } }),
    create: createRoute({
      method: 'post',
      path: `${SCIM_BASE}/${kind}`,
      operationId: `scimCreate${kind.slice(0, -1)}`,
      summary: `Provision a ${one}`,
      tags,
      security: scimToken,
      request: body(schema),
      responses: { 201: json(schema, `The ${one} made.`), 409: problem('The name is taken (scimType uniqueness).'), 415: problem('The body is not JSON.'), 422: problem('A field is missing or invalid (scimType invalidValue).'), ...errors },
    }),
    read: createRoute({ method: 'get', path: `${SCIM_BASE}/${kind}/{id}`, operationId: `scimGet${kind.slice(0, -1)}`, summary: `Read a ${one}`, tags, security: scimToken, request: { params: IdParam }, responses: { 200: json(schema, `The ${one}.`), 404: problem(`No such ${one} in the company.`), ...errors } }),
    replace: createRoute({
      method: 'put',
      path: `${SCIM_BASE}/${kind}/{id}`,
      operationId: `scimReplace${kind.slice(0, -1)}`,
      summary: `Replace a ${one}`,
      tags,
      security: scimToken,
      request: { params: IdParam, ...body(schema) },
      responses: { 200: json(schema, `The ${one} as it is now.`), 404: problem(`No such ${one} in the company.`), 409: problem('The name is taken, or the change is not the company’s to make.'), 415: problem('The body is not JSON.'), 422: problem('A field is missing or invalid.'), ...errors },
    }),
    patch: createRoute({
      method: 'patch',
      path: `${SCIM_BASE}/${kind}/{id}`,
      operationId: `scimPatch${kind.slice(0, -1)}`,
      summary: `Change a ${one}`,
      description: kind === 'Users' ? 'active false deactivates the person: their sessions and tokens end at once, on every process, and they sign in nowhere until active again.' : 'add, replace or remove members (members[value eq "id"] names one), or change the displayName; roles follow.',
      tags,
      security: scimToken,
      request: { params: IdParam, ...body(PatchOp) },
      responses: { 200: json(schema, `The ${one} as it is now.`), 404: problem(`No such ${one} in the company.`), 409: problem('The change is not the company’s to make.'), 415: problem('The body is not JSON.'), 422: problem('An operation is not possible.'), ...errors },
    }),
    remove: createRoute({
      method: 'delete',
      path: `${SCIM_BASE}/${kind}/{id}`,
      operationId: `scimDelete${kind.slice(0, -1)}`,
      summary: kind === 'Users' ? 'Remove a person from the company' : 'Delete a group',
      description: kind === 'Users' ? 'They leave the company and its groups; their sessions and tokens end; with no other company, they are deactivated.' : 'Its members’ roles follow.',
      tags,
      security: scimToken,
      request: { params: IdParam },
      responses: { 204: { description: 'Gone.' }, 404: problem(`No such ${one} in the company.`), 409: problem('The company’s last owner stays.'), ...errors },
    }),
  }
}

export const userRoutes = resourceRoutes('Users', UserResource)
export const groupRoutes = resourceRoutes('Groups', GroupResource)

export const discoveryRoutes = (['ServiceProviderConfig', 'ResourceTypes', 'Schemas'] as const).map((name) =>
  createRoute({
    method: 'get',
    path: `${SCIM_BASE}/${name}`,
    operationId: `scim${name}`,
    summary: `SCIM ${name}`,
    tags,
    security: scimToken,
    responses: { 200: json(Resource(`Scim${name}`, `What RFC 7643 §5–7 says a client may ask about this server: ${name}.`), 'What this server supports.'), ...errors },
  }),
)
