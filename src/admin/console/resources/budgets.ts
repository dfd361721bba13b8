import { peopleOptions, type ConsoleResource } from '../resource.ts'
import { utcText } from '../../components/time.tsx'

const METRICS = [
  { value: 'cost_usd', label: 'USD' },
  { value: 'tokens', label: 'tokens' },
]

export const budgets: ConsoleResource = {
  model: 'Budget',
  path: '/budgets',
  title: 'Budgets',
  singular: 'budget',
  intro:
    'What the company, or one person in it, may spend in a calendar month (UTC). Past 80 % people are told; at 100 % their turns and tool calls are refused until the month ends, the limit is raised, or it is lifted. The Usage page shows where each stands.',
  columns: [
    { field: 'user_id', label: 'Whom', show: (row) => (row.user_id ? String(row.user_id) : 'the whole company') },
    { field: 'metric', label: 'Counted in', show: (row) => (row.metric === 'tokens' ? 'tokens' : 'USD') },
    { field: 'monthly_limit', label: 'Monthly limit' },
    { field: 'lifted_until', label: 'Lifted until', show: (row) => (row.lifted_until ? utcText(String(row.lifted_until)) : '') },
  ],
  search: { field: 'metric', label: 'Counted in (cost_usd or tokens)' },
  fields: [
    { name: 'user_id', label: 'Whom', kind: 'select', options: 'people', empty: 'the whole company' },
    { name: 'metric', label: 'Counted in', kind: 'select', options: 'metrics', required: true },
    { name: 'monthly_limit', label: 'Monthly limit', kind: 'number', required: true, help: 'In USD or in tokens (input plus output).' },
    { name: 'lifted_until', label: 'Lifted until (ISO time, e.g. 2026-12-01T00:00:00Z)', help: 'Until then, a spent budget refuses nothing. Leave empty to enforce it.' },
  ],
  defaults: { metric: 'cost_usd' },
  options: async (c, api) => ({ people: await peopleOptions(c, api), metrics: METRICS }),
  nameOf: (row) => `${row.user_id ? 'person' : 'company'} ${row.metric === 'tokens' ? 'tokens' : 'USD'}`,
}
