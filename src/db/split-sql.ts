/**
 * Splits a migration file into statements. Both drivers run one statement per query (the extended protocol),
 * so a file is sent statement by statement. Quotes, dollar quotes and comments are respected.
 */
export function splitSql(source: string): string[] {
  const statements: string[] = []
  let start = 0
  let i = 0
  while (i < source.length) {
    const ch = source[i]
    if (ch === "'" || ch === '"') {
      const end = source.indexOf(ch, i + 1)
      i = end === -1 ? source.length : end + 1
    } else if (ch === '-' && source[i + 1] === '-') {
      const end = source.indexOf('\n', i)
      i = end === -1 ? source.length : end + 1
    } else if (ch === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2)
      i = end === -1 ? source.length : end + 2
    } else if (ch === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(source.slice(i))?.[0]
      if (tag) {
        const end = source.indexOf(tag, i + tag.length)
        i = end === -1 ? source.length : end + tag.length
      } else i++
    } else if (ch === ';') {
      statements.push(source.slice(start, i))
      i++
      start = i
    } else i++
  }
  statements.push(source.slice(start))
  return statements.map(stripComments).filter((s) => s.length > 0)
}

function stripComments(statement: string): string {
  return statement
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .trim()
}
