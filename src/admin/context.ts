/** The signed-in user, as GET /api/me describes them. */
export interface Me {
  user: { id: string; username: string; email: string; display_name: string; is_superadmin: boolean }
  company_id: string | null
  role: 'owner' | 'admin' | 'member' | null
}

export interface AdminEnv {
  Variables: {
    requestId: string
    me: Me
  }
}
