/** A form field of a console page; the name is the API field it writes. */
export interface Field {
  name: string
  label: string
  type?: 'text' | 'email' | 'password'
  required?: boolean
  /** Offered when a record is made, not when it is edited. */
  createOnly?: boolean
}

/**
 * A console page over one model of the public API: a filterable, paged table, a create form, inline edit and
 * delete. Users and Companies are two of these; later pages are more.
 */
export interface Resource {
  model: string
  path: string
  title: string
  singular: string
  columns: Array<{ field: string; label: string }>
  /** The field the search box filters with ilike. */
  search: { field: string; label: string }
  fields: Field[]
  /** What names a record in messages. */
  nameOf(row: Record<string, unknown>): string
}

export const PAGE_SIZE = 20

export const users: Resource = {
  model: 'User',
  path: '/users',
  title: 'Users',
  singular: 'user',
  columns: [
    { field: 'username', label: 'Username' },
    { field: 'display_name', label: 'Name' },
    { field: 'email', label: 'Email' },
  ],
  search: { field: 'username', label: 'Username contains' },
  fields: [
    { name: 'username', label: 'Username', required: true },
    { name: 'display_name', label: 'Name' },
    { name: 'email', label: 'Email', type: 'email', required: true },
    // The first password only: afterwards the user changes it (or is handed a reset link); admins never set it.
    { name: 'password', label: 'Password', type: 'password', createOnly: true },
  ],
  nameOf: (row) => String(row.username),
}

export const companies: Resource = {
  model: 'Company',
  path: '/companies',
  title: 'Companies',
  singular: 'company',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'slug', label: 'Slug' },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'slug', label: 'Slug', required: true },
  ],
  nameOf: (row) => String(row.name),
}

export const RESOURCES = [users, companies]
