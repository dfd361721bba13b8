export interface PermissionRule {
  user_id: string | null
  server: string
  tool: string
  effect: 'allow' | 'deny'
}

export type Decision = 'allow' | 'deny'

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
