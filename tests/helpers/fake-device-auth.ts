/**
 * A provider's OAuth endpoints for the device-authorization grant (RFC 8628), on loopback: the device code, the
 * token endpoint with its pending, denied and refresh answers. `approve()` and `deny()` stand for the person at the
 * provider's page.
 */
export function startFakeDeviceProvider(clientId = 'switchboard-test') {
  let base = ''
  const state = { approved: false, denied: false, issued: 0, refreshes: 0, expiresIn: 3600, currentRefresh: '', deviceCode: '', polls: 0 }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req): Promise<Response> {
      const path = new URL(req.url).pathname
      const form = new URLSearchParams(await req.text())
      if (form.get('client_id') !== clientId) return Response.json({ error: 'invalid_client' }, { status: 401 })
      if (path === '/device') {
        state.deviceCode = `dev-${crypto.randomUUID()}`
        return Response.json({ device_code: state.deviceCode, user_code: 'WDJB-MJHT', verification_uri: `${base}/activate`, verification_uri_complete: `${base}/activate?user_code=WDJB-MJHT`, expires_in: 600, interval: 1 })
      }
      if (path !== '/token') return new Response('not found', { status: 404 })
      const issue = () => {
        state.issued++
        state.currentRefresh = `rt-${state.issued}`
        return Response.json({ access_token: `at-${state.issued}`, refresh_token: state.currentRefresh, expires_in: state.expiresIn, token_type: 'Bearer' })
      }
      if (form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:device_code') {
        state.polls++
        if (form.get('device_code') !== state.deviceCode) return Response.json({ error: 'invalid_grant' }, { status: 400 })
        if (state.denied) return Response.json({ error: 'access_denied' }, { status: 400 })
        if (!state.approved) return Response.json({ error: 'authorization_pending' }, { status: 400 })
        state.deviceCode = ''
        return issue()
      }
      if (form.get('grant_type') === 'refresh_token') {
        if (form.get('refresh_token') !== state.currentRefresh) return Response.json({ error: 'invalid_grant', error_description: 'refresh token unknown or used' }, { status: 400 })
        state.refreshes++
        return issue()
      }
      return Response.json({ error: 'unsupported_grant_type' }, { status: 400 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
  return {
    base,
    state,
    approve: () => void (state.approved = true),
    deny: () => void (state.denied = true),
    reset: () => Object.assign(state, { approved: false, denied: false }),
    stop: () => server.stop(true),
  }
}
