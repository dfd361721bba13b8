/** A platform started as `npm start` starts it, once it has printed both addresses. */
export interface Started {
  api: string
  admin: string
  /** Everything it printed so far; it keeps reading. */
  output: () => string
}

/** Reads a started platform's output until it prints its addresses, then goes on reading (so it never blocks). */
export async function untilReady(child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>): Promise<Started> {
  let output = ''
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader()
  while (!/API and docs\s+(\S+)/.test(output)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server stopped before it was ready:\n${output}${await new Response(child.stderr).text()}`)
    output += value
  }
  void (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) output += r.value
  })()
  return {
    admin: /Admin console\s+(\S+)/.exec(output)![1]!.replace(/\/$/, ''),
    api: /API and docs\s+(\S+)/.exec(output)![1]!.replace(/\/api\/docs$/, ''),
    output: () => output,
  }
}
