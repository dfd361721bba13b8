import { sql } from 'kysely'

/**
 * A jsonb value as a text parameter cast in SQL: postgres.js would serialise a parameter it knows is jsonb once
 * more (storing a JSON string), while PGlite would not; as text both drivers send it unchanged.
 */
export function jsonb(value: unknown) {
  return sql`${JSON.stringify(value)}::text::jsonb`
}
