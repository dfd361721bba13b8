import type { core } from 'zod'

/** Zod's own messages, which speak of types and operators ("Too small: expected string to have >=1 characters"). */
const ZOD_DEFAULT = /^(Too small|Too big|Invalid input|Invalid option|Invalid string|Invalid (email|UUID|URL|ISO|uuid|url|date)|Invalid|Number must|String must)/

const NOUNS: Record<string, string> = { string: 'text', number: 'a number', int: 'a whole number', boolean: 'true or false', object: 'an object', record: 'an object', array: 'a list', date: 'a date' }
const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'an id (a UUID)',
  guid: 'an id (a UUID)',
  datetime: 'a date and time, such as 2026-11-27T09:30:00Z',
  date: 'a date, such as 2026-11-27',
  regex: 'in the expected form',
}

/**
 * What a person reads for a value that failed validation: plain words ("must not be empty", "must be at most 200
 * characters"), not zod's own; a message the schema chose itself is kept as written.
 */
export function readableIssue(issue: core.$ZodIssue): string {
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message
  switch (issue.code) {
    case 'too_small': {
      const min = Number(issue.minimum)
      if (issue.origin === 'string') return min <= 1 ? 'must not be empty' : `must be at least ${min} characters`
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${min} item${min === 1 ? '' : 's'}`
      return issue.inclusive === false ? `must be more than ${min}` : `must be at least ${min}`
    }
    case 'too_big': {
      const max = Number(issue.maximum)
      if (issue.origin === 'string') return `must be at most ${max} characters`
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} item${max === 1 ? '' : 's'}`
      return issue.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`
    }
    case 'invalid_type':
      // The input is not kept in the issue; zod's own message says what was received.
      return /received undefined$/.test(issue.message) ? 'is required' : `must be ${NOUNS[issue.expected] ?? issue.expected}`
    case 'invalid_format':
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`
    case 'invalid_value':
      return `must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`
    case 'invalid_union':
      return 'is not any of the accepted forms'
    default:
      return issue.message
  }
}
