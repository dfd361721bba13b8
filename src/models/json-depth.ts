/** How deeply a JSON value nests, counted without recursion so a hostile value cannot overflow the stack. */
export function jsonDepth(value: unknown): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    deepest = Math.max(deepest, depth)
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return deepest
}

/** Deeper than any configuration needs, far shallower than what breaks a parser or a recursive merge. */
export const MAX_JSON_DEPTH = 32
