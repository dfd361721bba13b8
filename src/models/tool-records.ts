import type { AccessPolicy } from '../auth/access.ts'
import type { Actor } from '../auth/actor.ts'
import type { Authenticator } from '../auth/authenticator.ts'
import { ApiError } from '../errors.ts'
import type { Writes } from '../events/writes.ts'
import type { ToolUser } from '../mcp/providers.ts'
import { jsonDepth, MAX_JSON_DEPTH } from './json-depth.ts'
import { createRecord, deleteRecord, patchRecord, type ApiRecord } from './records.ts'
import type { ModelRegistry } from './registry.ts'
import { validationError } from './validation.ts'

/**
 * The generic records as a plugin's tool writes them: as the person the tool runs for, held to the same role rules
 * as /api/v1, and made through the one write path, so caches, live agents and chat feeds follow exactly as they do
 * after a write through the API.
 */
export class ToolRecords {
  constructor(
    private readonly deps: { models: ModelRegistry; access: AccessPolicy; authenticator: Authenticator; writes: Writes },
  ) {}

  async create(user: ToolUser, modelName: string, input: Record<string, unknown>): Promise<ApiRecord> {
    const { model, actor } = await this.#allowed(user, modelName, 'create')
    if (model.createdElsewhere) throw new ApiError('method_not_allowed', model.createdElsewhere)
    const parsed = model.create.safeParse(input)
    if (!parsed.success) throw validationError(parsed.error)
    const { record } = await this.deps.writes.run(actor, (scope) => createRecord(scope, model, parsed.data))
    return model.redact ? model.redact(record) : record
  }

  async patch(user: ToolUser, modelName: string, id: string, patch: Record<string, unknown>): Promise<ApiRecord> {
    const { model, actor } = await this.#allowed(user, modelName, 'update')
    if (jsonDepth(patch) > MAX_JSON_DEPTH + 1) throw new ApiError('validation_error', `The patch nests deeper than ${MAX_JSON_DEPTH} levels.`, { errors: [{ path: '(body)', message: 'too deep' }] })
    const { record } = await this.deps.writes.run(actor, (scope) => patchRecord(scope, model, id.toLowerCase(), patch))
    return model.redact ? model.redact(record) : record
  }

  async delete(user: ToolUser, modelName: string, id: string): Promise<void> {
    const { model, actor } = await this.#allowed(user, modelName, 'delete')
    await this.deps.writes.run(actor, (scope) => deleteRecord(scope, model, id.toLowerCase()))
  }

  async #allowed(user: ToolUser, modelName: string, verb: 'create' | 'update' | 'delete') {
    const model = this.deps.models.get(modelName)
    if (!model) throw new ApiError('not_found', `There is no record type ${modelName}.`)
    if (!user.companyId) throw new ApiError('forbidden', 'Tools write records in a company, and you are not a member of any.')
    const member: Actor = await this.deps.authenticator.memberActor(user.userId, user.companyId)
    return { model, actor: await this.deps.access.authorize(member, model, verb) }
  }
}
