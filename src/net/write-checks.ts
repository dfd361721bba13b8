import { ApiError } from '../errors.ts'
import type { WriteContext } from '../models/define.ts'
import { OutboundRefused, type OutboundPolicy } from './outbound.ts'

/** Model guards ask the outbound-address policy through this; a refusal is a 422 on the field that named the URL. */
export function outboundChecks(policy: OutboundPolicy): WriteContext {
  return {
    async checkOutbound(path, url) {
      try {
        await policy.check(url)
      } catch (error) {
        if (!(error instanceof OutboundRefused)) throw error
        throw new ApiError('validation_error', 'The address is not one the platform may connect to.', { errors: [{ path, message: error.message }] })
      }
    },
  }
}
