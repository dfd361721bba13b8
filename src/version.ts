import manifest from '../package.json' with { type: 'json' }

/** The platform's one version, kept in package.json: OpenAPI's info.version, GET /api/version, the console's footer. */
export const VERSION: string = manifest.version

/** The REST API's major version, the one in its paths (`/api/v1`); it changes only when the policy says it may. */
export const API_MAJOR = 'v1'
