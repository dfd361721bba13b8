import type { Context, Hono } from 'hono'
import type { Child } from 'hono/jsx'
import type { ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import type { Field, FormValues, Option } from './form.ts'

export type { Field, FormValues, Option }

export type Ctx = Context<AdminEnv>
export type Row = Record<string, unknown>

/**
 * A record in an answer of the generic record routes, which the console reaches by a path made at run time (one
 * set of handlers serves every model), so no type says what their bodies hold: a JSON object, or nothing.
 */
export function rowOf(body: unknown): Row | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Row) : undefined
}

/** A page of records from the generic list route: its rows (objects only) and the total when it was counted. */
export function pageOf(body: unknown): { data: Row[]; count?: number } {
  const page = rowOf(body)
  const data = Array.isArray(page?.data) ? page.data.map(rowOf).filter((row): row is Row => row !== undefined) : []
  return typeof page?.count === 'number' ? { data, count: page.count } : { data }
}

export interface Column {
  field: string
  label: string
  /** The cell's text when the raw value would not read well (a flag, a nested value). */
  show?: (row: Row) => string
  /** False for a column the API cannot order by (one holding JSON). */
  sortable?: false
}

/**
 * A console page over one model of the public API: a searchable, paged list, a page per record with its form, and
 * panels below it for what is not a field (an agent's live state, a server's connection test, a company's people).
 */
export interface ConsoleResource {
  model: string
  path: string
  title: string
  singular: string
  intro?: string
  columns: Column[]
  /** The field the search box filters with ilike. */
  search: { field: string; label: string }
  fields: Field[]
  /** The option lists its select and checkboxes fields offer, read through the API for the signed-in user. */
  options?: (c: Ctx, api: ApiClient, values: FormValues) => Promise<Record<string, Option[]>>
  /** A new record's form starts from these: the API's defaults where the form would otherwise show another. */
  defaults?: Row
  /** What names a record in messages and headings. */
  nameOf(row: Row): string
  /** `mayEdit`: the person may change the record, so the panels may offer what changes it. */
  panels?: (c: Ctx, api: ApiClient, row: Row, mayEdit: boolean) => Promise<Child>
  /** Routes the panels' buttons call. */
  mountExtra?: (app: Hono<AdminEnv>, api: ApiClient) => void
}

export const PAGE_SIZE = 20

/** A fragment for htmx, the whole page for a plain browser request. */
export function isFragment(c: Ctx): boolean {
  return c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'
}

/** One record's API path; ids are checked to be UUIDs before they get here, encoding is the second guard. */
export function recordPath(model: string, id: string): string {
  return `/api/v1/${encodeURIComponent(model)}/${encodeURIComponent(id)}`
}

/** A record's version as If-Match wants it: the ETag the API sent with it. */
export function versionTag(version: string | undefined): string | undefined {
  return version && /^\d{1,9}$/.test(version) ? `"${version}"` : undefined
}

/** The version inside an ETag such as `"3"`. */
export function versionOf(etag: string | null): string {
  return /^"(\d{1,9})"$/.exec(etag ?? '')?.[1] ?? ''
}

/** An option list read through the API; empty when the API refuses it, so the form still shows (and says why on save). */
export async function optionsFrom<T>(listed: Promise<{ data?: { data: T[] } }>, option: (row: T) => Option | Option[]): Promise<Option[]> {
  return ((await listed).data?.data ?? []).flatMap(option)
}


/** The people the signed-in person may see, as a select offers them: name and username, by username. */
export function peopleOptions(c: Ctx, api: ApiClient): Promise<Option[]> {
  return optionsFrom(api.as(c).GET('/api/v1/User', { params: { query: { limit: '500', order: 'username.asc', select: 'id,username,display_name' } } }), (u) => ({
    value: u.id,
    label: u.display_name ? `${u.display_name} (${u.username})` : u.username,
  }))
}
