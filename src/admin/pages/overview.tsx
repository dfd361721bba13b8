/** @jsxImportSource hono/jsx */
import type { Schema } from '../api-client.ts'
import type { Child } from 'hono/jsx'
import { Time } from '../components/time.tsx'

export interface ModelCount {
  model: string
  count: number | undefined
}

type Figures = Schema<'Overview'>
type BudgetState = Schema<'BudgetState'>

/** One figure of the day: its number, what it counts, and where to look closer; `alarm` marks it when it is not zero. */
function Figure({ value, label, href, alarm }: { value: number; label: string; href?: string; alarm?: boolean }) {
  const body = (
    <>
      <span class="figure-value">{value}</span>
      <span class="figure-label">{label}</span>
    </>
  )
  return <li class={`figure${alarm && value > 0 ? ' alarm' : ''}`}>{href ? <a href={href}>{body}</a> : body}</li>
}

/** "Is everything all right?": the company's day, what waits, what failed and what is near its budget. */
export function Health({ figures, budgets }: { figures: Figures; budgets: BudgetState[] }) {
  const near = budgets.filter((b) => b.refusing || b.used >= b.limit * 0.8)
  const troubles = figures.failed_turns + figures.channels.failed + figures.background_tasks.failed + figures.breakers_open.length + near.length
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">{troubles === 0 ? 'Everything is all right' : `${troubles} ${troubles === 1 ? 'thing needs' : 'things need'} a look`}</h2>
      <p class="muted">
        Today since <Time iso={figures.since} />.
      </p>
      <ul class="figures">
        <Figure value={figures.turns} label="answers today" href="/usage" />
        <Figure value={figures.failed_turns} label="answers failed" href="/usage" alarm />
        <Figure value={figures.active_conversations} label="conversations active in the last 24 hours" />
        <Figure value={figures.channels.waiting_inbound + figures.channels.waiting_replies} label="channel messages waiting" href="/agents" />
        <Figure value={figures.channels.failed} label="channel deliveries failed" href="/agents" alarm />
        <Figure value={figures.background_tasks.running} label="background tasks running" />
        <Figure value={figures.background_tasks.failed} label="background tasks failed" alarm />
        <Figure value={figures.breakers_open.length} label="MCP servers cut off (breaker open)" href="/mcp-servers" alarm />
        <Figure value={near.length} label="budgets at 80 % or more" href="/budgets" alarm />
      </ul>
      {figures.channels.latest_failures.length > 0 ? (
        <>
          <h3>Latest channel failures</h3>
          <ul class="failures">
            {figures.channels.latest_failures.map((f) => (
              <li>
                <Time iso={f.at} /> · <a href={`/agents/${f.agent_id}`}>{f.agent_name}</a> on {f.platform}, {f.direction === 'reply' ? 'a reply was not delivered' : 'a message was not answered'}: <span class="error-text">{f.error}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {figures.breakers_open.length > 0 ? <p>Cut off: {figures.breakers_open.join(', ')}.</p> : null}
    </section>
  )
}
/** How many records each model holds, read through the public list endpoint. */
/** `pages`: the console page of each model that has one. */
export function Overview({ counts, apiBaseUrl, pages, health }: { counts: ModelCount[]; apiBaseUrl: string; pages: ReadonlyMap<string, { path: string; title: string }>; health?: Child }) {
  return (
    <section>
      <h1>Overview</h1>
      {health}
      <h2>Records</h2>
      <p>
        Scripts reach the same data through the REST API: <a href={`${apiBaseUrl}/api/docs`}>{`${apiBaseUrl}/api/docs`}</a>
      </p>
      <table class="counts">
        <thead>
          <tr>
            <th scope="col">Model (its API)</th>
            <th scope="col">Records</th>
            <th scope="col">Console page</th>
          </tr>
        </thead>
        <tbody>
          {counts.map(({ model, count }) => (
            <tr>
              <td>
                <a href={`${apiBaseUrl}/api/v1/${model}`}>{model}</a>
              </td>
              <td>{count ?? '—'}</td>
              <td>{pages.has(model) ? <a href={pages.get(model)!.path}>{pages.get(model)!.title}</a> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
