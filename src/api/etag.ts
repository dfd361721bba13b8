import type { Context } from 'hono'

/** A version as its ETag: strong, quoted (RFC 9110). */
export function etag(version: number): string {
  return `"${version}"`
}

/**
 * The versions If-Match accepts; undefined for `*` or no header. Comparison is strong: weak tags and tags never
 * issued match nothing, so the write is refused with 412.
 */
export function expectedVersions(c: Context): number[] | undefined {
  const header = c.req.header('if-match')?.trim()
  if (!header || header === '*') return undefined
  return header
    .split(',')
    .map((tag) => /^"(\d{1,9})"$/.exec(tag.trim())?.[1])
    .filter((version) => version !== undefined)
    .map(Number)
}
