import type { Answer } from './api-client.ts'
/** The signed-in user, as GET /api/me describes them. */
/** Who is signed in, as GET /api/me says: read once per request, before any page. */
export type Me = Answer<'get', '/api/me'>

export interface AdminEnv {
  Variables: {
    requestId: string
    me: Me
    /** The platform's name and banner, as the System settings say now. */
    display: Display
  }
}

/** What every page shows of the platform-wide settings. */
export interface Display {
  name: string
  banner: string
}
