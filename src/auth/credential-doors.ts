/**
 * The requests that make a credential, or change how an account signs in. An MCP host holding an OAuth access
 * token may not make them: whatever it made would outlive the grant the person can revoke (a personal API token,
 * a link code, a linked platform identity, an account with a password it chose, a password or an email address
 * it set, a grant it approved for itself). The person signs in to do these.
 */
const DOORS: Array<{ methods: readonly string[]; path: RegExp }> = [
  { methods: ['POST', 'PUT', 'PATCH'], path: /^\/api\/v1\/ApiToken(\/|$)/ },
  { methods: ['POST', 'PUT', 'PATCH'], path: /^\/api\/v1\/User(\/|$)/ },
  { methods: ['POST', 'PUT', 'PATCH'], path: /^\/api\/v1\/UserPlatform(\/|$)/ },
  { methods: ['POST'], path: /^\/api\/me\/(channel-links|password|email)(\/|$)/ },
  { methods: ['POST'], path: /^\/api\/users\/[^/]+\/password-reset$/ },
  { methods: ['POST'], path: /^\/api\/oauth\/authorize$/ },
]

export function makesCredential(method: string, path: string): boolean {
  return DOORS.some((door) => door.methods.includes(method) && door.path.test(path))
}
