import { sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'

/** Who work is for: the person and the company it is charged to. */
export interface Payer {
  userId: string
  companyId: string | null
}

/** A budget as it stands this month. */
export interface BudgetState {
  id: string
  /** The whole company's, or the person's own. */
  scope: 'company' | 'person'
  metric: 'cost_usd' | 'tokens'
  limit: number
  used: number
  /** Until then a spent budget refuses nothing; null when not lifted. */
  lifted_until: string | null
  /** Work is refused now: used up and not lifted. */
  refusing: boolean
}

/** How long a company's budgets are kept without a write to them (which flushes them in every process at once). */
const LIMITS_TTL_MS = 60_000

/** Past this share of a budget, people are told. */
export const NOTICE_SHARE = 0.8

interface Limit {
  id: string
  user_id: string | null
  metric: 'cost_usd' | 'tokens'
  monthly_limit: number
  lifted_until: Date | null
}

interface Spend {
  company: { cost_usd: number; tokens: number }
  person: { cost_usd: number; tokens: number }
}

/** The first instant of the UTC calendar month of `now`, and of the next. */
export function monthOf(now: number): { start: Date; end: Date } {
  const day = new Date(now)
  return { start: new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1)), end: new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1)) }
}

/**
 * Monthly budgets, judged before a turn or a tool call starts. A company with no budget costs one cached lookup;
 * one with budgets reads its month's spend at most every few seconds per person, and afresh after a turn of this
 * process is charged. Across processes the spend may be a few seconds old, so concurrent turns may overshoot a
 * limit by what they cost: a budget stops work at the next turn, never mid-answer.
 */
export class Budgets {
  readonly #limits: TtlCache<string, Limit[]>
  /** The same, once read: what a tool call checks without waiting. */
  readonly #known = new LRUCache<string, { limits: Limit[]; at: number }>({ max: 10_000 })
  readonly #spend: TtlCache<string, Spend>
  /** Bumped when this process charges a company, so that its people's spend is read afresh. */
  readonly #generations = new LRUCache<string, number>({ max: 10_000 })

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    events?: EventBus,
  ) {
    this.#limits = new TtlCache(clock, LIMITS_TTL_MS)
    this.#spend = new TtlCache(clock, 5_000)
    if (events)
      flushOn(events, 'budgets', () => {
        this.#limits.clear()
        this.#known.clear()
      })
  }

  /** The budgets that apply to the person, as they stand this month (the company's and their own). */
  async states(payer: Payer): Promise<BudgetState[]> {
    if (!payer.companyId) return []
    const limits = (await this.#limitsOf(payer.companyId)).filter((l) => l.user_id === null || l.user_id === payer.userId)
    if (limits.length === 0) return []
    const spend = await this.#spendOf(payer.companyId, payer.userId)
    const now = this.clock.now()
    return limits.map((limit) => {
      const scope = limit.user_id === null ? 'company' : 'person'
      const used = spend[scope][limit.metric]
      const lifted = limit.lifted_until !== null && limit.lifted_until.getTime() > now
      return {
        id: limit.id,
        scope,
        metric: limit.metric,
        limit: limit.monthly_limit,
        used,
        lifted_until: lifted ? limit.lifted_until!.toISOString() : null,
        refusing: used >= limit.monthly_limit && !lifted,
      }
    })
  }

  /**
   * Before work starts: refuses it (429 budget_exceeded, until the month ends) when a budget is spent, and otherwise
   * answers what people should be told (a budget past 80 %, or spent but lifted).
   */
  async admit(payer: Payer): Promise<string[]> {
    const states = await this.states(payer)
    const refusing = states.find((s) => s.refusing)
    if (refusing) {
      const { end } = monthOf(this.clock.now())
      throw new ApiError('budget_exceeded', `${whose(refusing)} monthly budget is spent: ${amount(refusing, refusing.used)} of ${amount(refusing, refusing.limit)} this month. Work resumes on ${end.toISOString().slice(0, 10)}, or when an admin raises or lifts the budget.`, {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((end.getTime() - this.clock.now()) / 1000))) },
      })
    }
    return states.filter((s) => s.used >= s.limit * NOTICE_SHARE).map(noticeOf)
  }

  /**
   * The reason to refuse a tool call, or nothing: tool calls stop with the turns. Nothing at once, without a promise,
   * when the company's budgets are known and none applies to the person: the case of every call of most companies.
   */
  refusal(payer: Payer): Promise<string | undefined> | undefined {
    if (!payer.companyId) return undefined
    const known = this.#known.get(payer.companyId)
    if (known && this.clock.now() - known.at < LIMITS_TTL_MS && !known.limits.some((l) => l.user_id === null || l.user_id === payer.userId)) return undefined
    return this.#refusal(payer)
  }

  async #refusal(payer: Payer): Promise<string | undefined> {
    try {
      await this.admit(payer)
      return undefined
    } catch (error) {
      if (error instanceof ApiError && error.code === 'budget_exceeded') return error.message
      throw error
    }
  }

  /** Work of this process was charged to the company: its spend is read afresh at the next check. */
  charged(companyId: string): void {
    // A new generation of the company's keys: what the old ones hold is never read again, and ages out.
    this.#generations.set(companyId, (this.#generations.get(companyId) ?? 0) + 1)
  }

  #limitsOf(companyId: string): Promise<Limit[]> {
    return this.#limits.get(companyId, async () => {
      const at = this.clock.now()
      const limits = await this.db.selectFrom('budgets').select(['id', 'user_id', 'metric', 'monthly_limit', 'lifted_until']).where('company_id', '=', companyId).execute()
      this.#known.set(companyId, { limits, at })
      return limits
    })
  }

  #spendOf(companyId: string, userId: string): Promise<Spend> {
    return this.#spend.get(`${companyId}:${this.#generations.get(companyId) ?? 0}:${userId}`, async () => {
      const row = await this.db
        .selectFrom('usage_records')
        .select([
          sql<number>`coalesce(sum(cost_usd), 0)::float8`.as('cost'),
          sql<number>`coalesce(sum(input_tokens + output_tokens), 0)::float8`.as('tokens'),
          sql<number>`coalesce(sum(cost_usd) filter (where user_id = ${userId}), 0)::float8`.as('my_cost'),
          sql<number>`coalesce(sum(input_tokens + output_tokens) filter (where user_id = ${userId}), 0)::float8`.as('my_tokens'),
        ])
        .where('company_id', '=', companyId)
        .where('created_at', '>=', monthOf(this.clock.now()).start)
        .executeTakeFirstOrThrow()
      return { company: { cost_usd: Number(row.cost), tokens: Number(row.tokens) }, person: { cost_usd: Number(row.my_cost), tokens: Number(row.my_tokens) } }
    })
  }
}

function whose(state: BudgetState): string {
  return state.scope === 'company' ? 'Your company’s' : 'Your'
}

function amount(state: Pick<BudgetState, 'metric'>, value: number): string {
  return state.metric === 'cost_usd' ? `USD ${value.toFixed(2)}` : `${Math.round(value).toLocaleString('en')} tokens`
}

function noticeOf(state: BudgetState): string {
  const used = `${amount(state, state.used)} of ${amount(state, state.limit)}`
  if (state.used >= state.limit) return `${whose(state)} monthly budget is spent (${used}); an admin lifted it until ${state.lifted_until!.slice(0, 16).replace('T', ' ')} UTC.`
  return `${whose(state)} monthly budget is ${Math.floor((state.used / state.limit) * 100)} % used (${used}).`
}
