import type { ConsoleResource } from '../resource.ts'

const ROLES = [
  { value: 'member', label: 'member' },
  { value: 'admin', label: 'admin' },
]

/** The identity providers a company signs its people in with (OpenID Connect). */
export const identityProviders: ConsoleResource = {
  model: 'IdentityProvider',
  path: '/identity-providers',
  title: 'Sign-in providers',
  singular: 'sign-in provider',
  intro:
    'OpenID Connect identity providers (Okta, Entra ID, Google Workspace, Keycloak…) the company’s people sign in with: each is a “Sign in with …” button on the sign-in page. ' +
    'Register the redirect URI /auth/sso/{slug}/callback of the console’s address with the provider, and keep the client secret in the Vault.',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'slug', label: 'Slug' },
    { field: 'issuer', label: 'Issuer' },
    { field: 'enabled', label: 'On', show: (row) => (row.enabled ? 'yes' : 'no') },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true, help: 'The button says “Sign in with {name}”.' },
    { name: 'slug', label: 'Slug', required: true, help: 'Lowercase letters, digits and dashes; the sign-in addresses are /auth/sso/{slug} and /auth/sso/{slug}/callback.' },
    { name: 'issuer', label: 'Issuer', required: true, help: 'Its discovery document is {issuer}/.well-known/openid-configuration.' },
    { name: 'client_id', label: 'Client id', required: true },
    { name: 'client_secret_secret', label: 'Client secret (vault name)', nullable: true, help: 'The name of the company’s vault secret that holds it; empty for a public client.' },
    { name: 'scopes', label: 'Scopes', help: 'openid email profile unless set; add the scope that carries groups if the provider has one.' },
    { name: 'enabled', label: 'Switched on', kind: 'checkbox' },
    { name: 'listed', label: 'Offered on the shared sign-in page', kind: 'checkbox', help: 'Superadmins only. Otherwise the company’s own page, /login?company={company slug}, offers it.' },
    { name: 'jit', label: 'Creates people on their first sign-in', kind: 'checkbox' },
    { name: 'link_by_email', label: 'Links an existing member with the same verified email', kind: 'checkbox' },
    { name: 'groups_claim', label: 'Groups claim', help: 'The ID token claim listing the person’s groups (groups unless set).' },
    { name: 'role_mapping', label: 'Roles by group (JSON)', kind: 'json', help: 'e.g. [{"group": "eng-leads", "role": "admin"}]: no role above your own.' },
    { name: 'default_role', label: 'Role of someone in no mapped group', kind: 'select', options: 'roles', empty: 'nobody else may sign in', nullable: true },
  ],
  defaults: { enabled: true, jit: true, default_role: 'member', role_mapping: [] },
  options: async () => ({ roles: ROLES }),
  nameOf: (row) => String(row.name ?? ''),
}
