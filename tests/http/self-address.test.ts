import { expect, test } from 'bun:test'
import { SelfAddress } from '../../src/http/self-address.ts'

test('a wildcard or loopback listener is called back on loopback, at the port it got', () => {
  const self = new SelfAddress('0.0.0.0', 0)
  self.listening(43123)
  expect(self.apiUrl).toBe('http://127.0.0.1:43123')
  expect(new SelfAddress('127.0.0.1', 8000).apiUrl).toBe('http://127.0.0.1:8000')
  expect(new SelfAddress('localhost', 8000).apiUrl).toBe('http://127.0.0.1:8000')
  expect(new SelfAddress('::', 8000).apiUrl).toBe('http://[::1]:8000')
})

test('a listener bound to one address is called back there', () => {
  expect(new SelfAddress('10.1.2.3', 8000).apiUrl).toBe('http://10.1.2.3:8000')
  expect(new SelfAddress('fd00::5', 8000).apiUrl).toBe('http://[fd00::5]:8000')
})
