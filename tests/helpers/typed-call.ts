import type { paths } from '../../src/admin/api-types.ts'

/**
 * What `p.call` answers, read from the API's document: a concrete path (`/api/v1/User/${id}?role=eq.admin`) is matched
 * against the document's templates (`/api/v1/User/{id}`), and the body is that operation's JSON answer when it
 * succeeds. A path the document does not describe, or one built from a bare string, answers `unknown`, which the test
 * narrows. Refusals are read with expectProblem, which takes any reply.
 */
type WithoutQuery<P extends string> = P extends `${infer Base}?${string}` ? Base : P
type Segments<P extends string> = P extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [P]
/** Segment by segment, so `/api/plans/${id}/update` is the update route and not also `/api/plans/{id}`. */
type Fits<Given extends string[], Template extends string[]> = Given extends [infer G extends string, ...infer GivenRest extends string[]]
  ? Template extends [infer T extends string, ...infer TemplateRest extends string[]]
    ? T extends `{${string}}` ? Fits<GivenRest, TemplateRest> : G extends T ? Fits<GivenRest, TemplateRest> : false
    : false
  : Template extends [] ? true : false
type Matching<P extends string> = { [K in keyof paths & string]: Fits<Segments<WithoutQuery<P>>, Segments<K>> extends true ? K : never }[keyof paths & string]

type SuccessBody<Operation> = Operation extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof R]
  : unknown

type Lower<M extends string> = Lowercase<M>
export type CallBody<Method extends string, Path extends string> = string extends Path
  ? unknown
  : [Matching<Path>] extends [never]
    ? unknown
    : Matching<Path> extends infer K extends keyof paths
      ? Lower<Method> extends keyof paths[K]
        ? [SuccessBody<paths[K][Lower<Method> & keyof paths[K]]>] extends [never]
          ? unknown
          : SuccessBody<paths[K][Lower<Method> & keyof paths[K]]>
        : unknown
      : unknown

/** A JSON object's fields, for an answer whose shape a test knows only at run time (a model chosen by a loop). */
export function fieldsOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error(`expected a JSON object, got ${JSON.stringify(body)}`)
  return body as Record<string, unknown>
}

/** The rows of a list answer (`{ data: [...] }`) whose model a test knows only at run time. */
export function rowsOf(body: unknown): Record<string, unknown>[] {
  const data = fieldsOf(body).data
  if (!Array.isArray(data)) throw new Error(`expected a page of rows, got ${JSON.stringify(body)}`)
  return data.map(fieldsOf)
}
