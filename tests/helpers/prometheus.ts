/**
 * Reads Prometheus' text exposition format (what /metrics answers) into one number per series, keyed
 * `name{label="value",…}` with the labels sorted, so a test can compare two scrapes series by series. Comments and
 * type lines are skipped; a line that is not a sample fails the test, since a scraper would choke on it too.
 */
export function parsePrometheus(text: string): Map<string, number> {
  const series = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$/.exec(line)
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`)
    const [, name, , labelText = '', value] = match
    series.set(seriesKey(name!, labelsOf(labelText)), Number(value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : value))
  }
  return series
}

/** `name{a="1",b="2"}` with the labels in order: how parsePrometheus keys a series. */
export function seriesKey(name: string, labels: Record<string, string> = {}): string {
  const pairs = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))
  return pairs.length === 0 ? name : `${name}{${pairs.map(([k, v]) => `${k}="${v}"`).join(',')}}`
}

function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {}
  const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy
  let read = 0
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    labels[match[1]!] = match[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c))
    read = pattern.lastIndex
  }
  if (read !== text.length) throw new Error(`unreadable labels: {${text}}`)
  return labels
}
