import { expect, test } from 'bun:test'
import { bounded, NoMetrics } from '../../src/metrics/metrics.ts'
import { PrometheusMetrics } from '../../src/metrics/prometheus.ts'
import { parsePrometheus, seriesKey } from '../helpers/prometheus.ts'

test('a label keeps a short plain name and makes anything else `other`: names a tenant or an upstream chose cannot explode the series', () => {
  expect(bounded('notes')).toBe('notes')
  expect(bounded('gpt-4o-mini')).toBe('gpt-4o-mini')
  expect(bounded('01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e')).toBe('01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e')
  for (const hostile of ['', 'x'.repeat(65), 'a name with spaces', 'tool"} 1\nfake_metric{a="b', undefined]) expect(bounded(hostile)).toBe('other')
})

test('Prometheus metrics count what they are told, on a registry of their own; the no-metrics kind counts nothing', async () => {
  const [one, two] = [new PrometheusMetrics(), new PrometheusMetrics()]
  one.toolCall('notes', 'whoami', 'ok')
  one.toolCall('notes', 'tool"} 1\ninjected{x="y', 'error')
  one.refused('api')
  one.breakers({ closed: 2, open: 1, 'half-open': 0 })
  one.channelWork('outbox', 'retry')
  one.channelWork('outbox', 'retry')
  const read = async (m: PrometheusMetrics) => parsePrometheus((await m.scrape(async () => {})).text)
  const [first, second] = [await read(one), await read(two)]
  expect(first.get(seriesKey('switchboard_mcp_tool_calls_total', { server: 'notes', tool: 'whoami', outcome: 'ok' }))).toBe(1)
  expect(first.get(seriesKey('switchboard_mcp_tool_calls_total', { server: 'notes', tool: 'other', outcome: 'error' }))).toBe(1)
  expect([...first.keys()].some((key) => key.startsWith('injected'))).toBe(false)
  expect(first.get(seriesKey('switchboard_throttle_refusals_total', { limit: 'api' }))).toBe(1)
  expect(second.get(seriesKey('switchboard_throttle_refusals_total', { limit: 'api' }))).toBeUndefined()
  expect(first.get(seriesKey('switchboard_mcp_breakers', { state: 'open' }))).toBe(1)
  expect(first.get(seriesKey('switchboard_channel_work_total', { queue: 'outbox', outcome: 'retry' }))).toBe(2)
  expect(first.get(seriesKey('switchboard_mcp_breakers', { state: 'closed' }))).toBe(2)
  const none = new NoMetrics()
  none.refused()
  expect(none.enabled).toBe(false)
  expect((await none.scrape()).text).toBe('')
})

test('the Grafana dashboard and the scrape configuration name only metrics the platform serves', async () => {
  const dashboard = (await Bun.file(new URL('../../src/metrics/grafana-dashboard.json', import.meta.url)).json()) as { panels: Array<{ targets: Array<{ expr: string }> }> }
  const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr))
  expect(expressions.length).toBeGreaterThan(10)
  const used = new Set(expressions.flatMap((expr) => [...expr.matchAll(/\bswitchboard_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ''))))
  const served = new Set([...(await new PrometheusMetrics().scrape(async () => {})).text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]))
  expect([...used].filter((name) => !served.has(name))).toEqual([])
  const scrape = await Bun.file(new URL('../../src/metrics/prometheus.yml', import.meta.url)).text()
  expect(scrape).toContain('metrics_path: /metrics')
  expect(scrape).toContain('type: Bearer')
})
