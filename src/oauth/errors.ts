/**
 * An OAuth error as RFC 6749 §5.2 (and RFCs 7009, 7591, 8707) answer it: a code from the RFC, a description for the
 * developer, and the status. These endpoints speak OAuth's JSON, not problem+json, because OAuth clients read it.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: 400 | 401 | 403 = 400,
  ) {
    super(description)
    this.name = 'OAuthError'
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description }
  }
}
