export interface PermissionRule {
  /** Absent for rules made in code (tests, previews); names the rule in an approval request. */
  id?: string
  user_id: string | null
  server: string
  tool: string
  effect: 'allow' | 'deny' | 'approve'
  /** With `approve`: who may answer, and how long the call waits. */
  approvers?: 'self' | 'admins'
  approval_timeout_seconds?: number
}

/** `approve`: the tool may be used, each call after a person's yes. */
export type Decision = 'allow' | 'deny' | 'approve'

/** At one specificity, the stricter rule stands: deny over approve over allow. */
const STRICTNESS: Record<Decision, number> = { allow: 0, approve: 1, deny: 2 }

/**
 * How specific a rule is for (server, item); undefined when it does not apply. A named server beats `*`; then an
 * exact item beats a prefix (`get-*`, `resource:docs://private/*`), a longer prefix a shorter one, and any of them `*`.
 */
function specificity(rule: PermissionRule, server: string, item: string): number | undefined {
  const serverMatch = rule.server === server ? 1_000 : rule.server === '*' ? 0 : undefined
  if (serverMatch === undefined) return undefined
  if (rule.tool === item) return serverMatch + 999
  if (rule.tool === '*') return serverMatch
  if (rule.tool.endsWith('*') && item.startsWith(rule.tool.slice(0, -1))) return serverMatch + Math.min(rule.tool.length, 998)
  return undefined
}

/**
 * The rules that judge `userId` on `server`: their own, if they have any that reach this server; otherwise the
 * company's defaults. So a user with no explicit permissions falls through to the default.
 */
function effectiveRules(rules: readonly PermissionRule[], userId: string, server: string): PermissionRule[] {
  const own = rules.filter((r) => r.user_id === userId && (r.server === server || r.server === '*'))
  return own.length > 0 ? own : rules.filter((r) => r.user_id === null)
}

/** What `userId` may do with `tool` on `server`, and the rule that says so (none: no rule applies, a deny). */
export function toolVerdict(rules: readonly PermissionRule[], userId: string, server: string, tool: string): { decision: Decision; rule?: PermissionRule } {
  let best = -1
  let deciding: PermissionRule | undefined
  for (const rule of effectiveRules(rules, userId, server)) {
    const rank = specificity(rule, server, tool)
    if (rank === undefined || rank < best) continue
    if (rank > best || !deciding || STRICTNESS[rule.effect] > STRICTNESS[deciding.effect]) deciding = rule
    best = rank
  }
  return deciding ? { decision: deciding.effect, rule: deciding } : { decision: 'deny' }
}

/** May `userId` call `tool` on `server`? The most specific rule decides; deny wins a tie, then approve; no rule is a deny. */
export function mayUseTool(rules: readonly PermissionRule[], userId: string, server: string, tool: string): Decision {
  return toolVerdict(rules, userId, server, tool).decision
}

/** May `userId` reach `server` at all: some tool of it may be used (at once or after approval), or the whole server. */
export function mayUseServer(rules: readonly PermissionRule[], userId: string, server: string): boolean {
  const applicable = effectiveRules(rules, userId, server)
  if (mayUseTool(rules, userId, server, '*') !== 'deny') return true
  return applicable.some((r) => r.server === server && r.tool !== '*' && r.effect !== 'deny' && mayUseTool(rules, userId, server, r.tool) !== 'deny')
}
