/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'

/**
 * A table of records with a caption for screen readers; `actions` adds the last column of buttons, whose header
 * is named for screen readers too.
 */
export function Table({ caption, headers, actions, children }: { caption: string; headers: string[]; actions?: boolean; children?: Child }) {
  return (
    <table>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {headers.map((header) => (
            <th scope="col">{header}</th>
          ))}
          {actions ? (
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  )
}
