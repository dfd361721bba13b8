import type { Context } from 'hono'
import type { Origin } from '../audit/trail.ts'
import { clientAddress } from './client-address.ts'

/** The request's id and address, which the audit trail records with what it wrote. */
export function originOf(c: Context): Origin {
  return { requestId: c.get('requestId'), address: clientAddress(c) }
}
