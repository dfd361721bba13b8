import { expect, test } from 'bun:test'
import { sniffFileType } from '../../src/documents/sniff.ts'

const PNG_1X1 = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='),
  (c) => c.charCodeAt(0),
)

test('bytes are judged by their magic numbers; text has none', async () => {
  expect(await sniffFileType(PNG_1X1)).toEqual({ ext: 'png', mime: 'image/png' })
  expect(await sniffFileType(new TextEncoder().encode('name,size\nann,3\n'))).toBeUndefined()
})
