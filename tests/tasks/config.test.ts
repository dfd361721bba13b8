import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/config.ts'

test('SWITCHBOARD_TASKS_PER_USER sets the background tasks one person may run at once: 3 unless set, at least 1', () => {
  expect(loadConfig({}).tasksPerUser).toBe(3)
  expect(loadConfig({ SWITCHBOARD_TASKS_PER_USER: '8' }).tasksPerUser).toBe(8)
  expect(() => loadConfig({ SWITCHBOARD_TASKS_PER_USER: '0' })).toThrow(/SWITCHBOARD_TASKS_PER_USER/)
  expect(() => loadConfig({ SWITCHBOARD_TASKS_PER_USER: 'many' })).toThrow(/SWITCHBOARD_TASKS_PER_USER/)
})
