import { expect, test } from 'bun:test'
import { pageNumbers } from '../../../src/admin/console/pages.tsx'

test('the pager offers the first and last pages and two either side of the current one, with gaps between', () => {
  expect(pageNumbers(1, 1)).toEqual([1])
  expect(pageNumbers(1, 3)).toEqual([1, 2, 3])
  expect(pageNumbers(5, 10)).toEqual([1, 'gap', 3, 4, 5, 6, 7, 'gap', 10])
  expect(pageNumbers(1, 10)).toEqual([1, 2, 3, 'gap', 10])
  expect(pageNumbers(10, 10)).toEqual([1, 'gap', 8, 9, 10])
  // Next to the first page, no gap of nothing.
  expect(pageNumbers(4, 10)).toEqual([1, 2, 3, 4, 5, 6, 'gap', 10])
})
