// oidc-provider ships no type declarations; the test provider uses it through this much of its API.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'
  class Grant {
    constructor(options: { accountId: string; clientId: string })
    addOIDCScope(scope: string): void
    save(): Promise<string>
  }
  export default class Provider {
    constructor(issuer: string, configuration: unknown)
    Grant: typeof Grant
    proxy: boolean
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; params: Record<string, unknown> }>
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: unknown, options?: { mergeWithLastSubmission?: boolean }): Promise<void>
  }
}
