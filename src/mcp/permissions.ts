export interface PermissionRule {
  user_id: string | null
  server: string
  tool: string
  effect: 'allow' | 'deny'
}

export type Decision = 'allow' | 'deny'

/** How specific a rule is for (server, tool); undefined when it does not apply. */
function specificity(rule: PermissionRule, server: string, tool: string): number | undefined {
  const serverMatch = rule.server === server ? 2 : rule.server === '*' ? 0 : undefined
  const toolMatch = rule.tool === tool ? 1 : rule.tool === '*' ? 0 : undefined
  return serverMatch === undefined || toolMatch === undefined ? undefined : serverMatch + toolMatch
}

/**
 * The rules that judge `userId` on `server`: their own, if they have any that reach this server; otherwise the
 * company's defaults. So a user with no explicit permissions falls through to the default.
 */
function effectiveRules(rules: readonly PermissionRule[], userId: string, server: string): PermissionRule[] {
  const own = rules.filter((r) => r.user_id === userId && (r.server === server || r.server === '*'))
  return own.length > 0 ? own : rules.filter((r) => r.user_id === null)
}

/** May `userId` call `tool` on `server`? The most specific rule decides; deny wins a tie; no rule is a deny. */
export function mayUseTool(rules: readonly PermissionRule[], userId: string, server: string, tool: string): Decision {
  let best = -1
  let decision: Decision = 'deny'
  for (const rule of effectiveRules(rules, userId, server)) {
    const rank = specificity(rule, server, tool)
    if (rank === undefined || rank < best) continue
    decision = rank > best || rule.effect === 'deny' ? rule.effect : decision
    best = rank
  }
  return decision
}

/** May `userId` reach `server` at all: some tool of it is allowed, or the whole server is. */
export function mayUseServer(rules: readonly PermissionRule[], userId: string, server: string): boolean {
  const applicable = effectiveRules(rules, userId, server)
  if (mayUseTool(rules, userId, server, '*') === 'allow') return true
  return applicable.some((r) => r.server === server && r.tool !== '*' && r.effect === 'allow' && mayUseTool(rules, userId, server, r.tool) === 'allow')
}
