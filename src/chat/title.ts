/** How long a title made from a first message may be, in characters. */
const MOST = 60

/**
 * A conversation's title from its first message: its gist, not its raw first line. Mentions of the agent first,
 * markdown marks, links' targets,
 * bare URLs and code are left out, a command (`/tool name {…}`) is named by its words without its arguments, and
 * the first sentence is kept, cut at a word within 60 characters.
 */
export function titleOf(text: string): string {
  let line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '' && !l.startsWith('```')) ?? ''
  // Addressing the agent (`@helpdesk, …`) is not what the conversation is about.
  line = line.replace(/^(@[\w.-]+[,:]?\s+)+/, '')
  // A command: its name and plain words, not the JSON it carries.
  const command = /^\/([a-z][\w-]*)\s*(.*)$/i.exec(line)
  if (command) line = `${command[1]} ${command[2]!.replace(/[{[].*$/s, '')}`
  line = line
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/^(#{1,6}|>|[-*+]|\d+[.)])\s+/, '')
    // Emphasis only where it stands apart from words: snake_case names keep their underscores.
    .replace(/(^|[\s(])([*_~]{1,3})([^*_~\s][^*_~]*?)\2(?=$|[\s).,!?:;])/g, '$1$3')
    .replace(/\s+/g, ' ')
    .trim()
  const sentence = /^(.+?[.!?])(\s|$)/.exec(line)?.[1] ?? line
  const gist = sentence.length >= 12 ? sentence : line
  if (gist.length <= MOST) return gist.replace(/[.]$/, '')
  const cut = gist.slice(0, MOST)
  const space = cut.lastIndexOf(' ')
  return `${(space > MOST / 2 ? cut.slice(0, space) : cut).replace(/[,;:]$/, '')}…`
}

