import type { ZodError } from 'zod'
import { ApiError, zodErrors } from '../errors.ts'

export function validationError(error: ZodError, prefix = ''): ApiError {
  const errors = zodErrors(error, prefix)
  return new ApiError('validation_error', `${errors.length} field(s) are not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors })
}
