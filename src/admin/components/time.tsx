/** @jsxImportSource hono/jsx */

/** A moment as the server writes it: to the minute, in UTC. */
export const utcText = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`

/**
 * A moment, in UTC until the page's script (static/page.js) says it in the reader's own locale and time zone;
 * `never` when there is none.
 */
export function Time({ iso, never = '' }: { iso: string | null | undefined; never?: string }) {
  if (!iso) return <>{never}</>
  return <time datetime={iso}>{utcText(iso)}</time>
}
