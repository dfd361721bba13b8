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
