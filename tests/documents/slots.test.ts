import { expect, test } from 'bun:test'
import { Slots, SlotsBusy } from '../../src/documents/slots.ts'

test('at most `size` run at once, `queue` more wait their turn in order, and any more are refused at once', async () => {
  const slots = new Slots(2, 2)
  const started: number[] = []
  const gates = Array.from({ length: 4 }, () => Promise.withResolvers<void>())
  const runs = gates.map((gate, i) =>
    slots.run(async () => {
      started.push(i)
      await gate.promise
      return i
    }),
  )
  await Bun.sleep(0)
  expect(started).toEqual([0, 1])
  expect(slots.run(async () => 'late')).rejects.toBeInstanceOf(SlotsBusy)
  gates[0]!.resolve()
  await runs[0]
  await Bun.sleep(0)
  expect(started).toEqual([0, 1, 2])
  for (const gate of gates) gate.resolve()
  expect(await Promise.all(runs)).toEqual([0, 1, 2, 3])
  // With the line empty again, work is taken.
  expect(await slots.run(async () => 'again')).toBe('again')
})

const ann = { companyId: 'a', userId: 'ann' }
const amy = { companyId: 'a', userId: 'amy' }
const bob = { companyId: 'b', userId: 'bob' }

test('a person and a company hold only their share; others still get in', async () => {
  const slots = new Slots(4, 10, { person: 2, company: 3 })
  const gate = Promise.withResolvers<void>()
  const held = [slots.run(() => gate.promise, ann), slots.run(() => gate.promise, ann)]
  const refused = await slots.run(async () => 'third', ann).catch((error) => error)
  expect(refused).toBeInstanceOf(SlotsBusy)
  expect(refused.whose).toBe('person')
  held.push(slots.run(() => gate.promise, amy))
  expect((await slots.run(async () => 'fourth', amy).catch((error) => error)).whose).toBe('company')
  expect(await slots.run(async () => 'bob’s', bob)).toBe('bob’s')
  gate.resolve()
  await Promise.all(held)
  // Shares are given back when the work is done.
  expect(await slots.run(async () => 'later', ann)).toBe('later')
})

test('a freed slot goes to the waiting company that runs least, not to the longest line', async () => {
  const slots = new Slots(1, 10, { person: 10, company: 10 })
  const order: string[] = []
  const first = Promise.withResolvers<void>()
  const running = slots.run(() => first.promise, ann)
  const waiting = [
    slots.run(async () => void order.push('ann 2'), ann),
    slots.run(async () => void order.push('ann 3'), ann),
    slots.run(async () => void order.push('bob 1'), bob),
  ]
  await Bun.sleep(0)
  first.resolve()
  await Promise.all([running, ...waiting])
  expect(order[0]).toBe('bob 1')
})
