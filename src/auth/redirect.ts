const BASE = 'http://switchboard.invalid'

/**
 * The local path a sign-in may send the browser to, or `/`. Only paths on this site pass: no scheme, no
 * `//host`, no backslash (browsers read `/\host` as `//host`), no control characters, in any percent-encoding.
 */
export function localRedirect(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') return '/'
  let decoded = raw
  for (let i = 0; i < 5; i++) {
    let next: string
    try {
      next = decodeURIComponent(decoded)
    } catch {
      return '/'
    }
    if (next === decoded) break
    decoded = next
  }
  for (const form of [raw, decoded]) {
    if (!form.startsWith('/') || form.startsWith('//') || form.includes('\\') || /[\u0000-\u001f\u007f]/.test(form)) return '/'
  }
  const url = new URL(raw, BASE)
  return url.origin === BASE ? `${url.pathname}${url.search}${url.hash}` : '/'
}
