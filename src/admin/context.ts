import type { Answer } from './api-client.ts'
/** The signed-in user, as GET /api/me describes them. */
/** Who is signed in, as GET /api/me says: read once per request, before any page. */
export type Me = Answer<'get', '/api/me'>

export interface AdminEnv {
  Variables: {
    requestId: string
    me: Me
  }
}
