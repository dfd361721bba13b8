/**
 * Whether `text` mentions the agent as `@name`. Case does not matter, and a name with spaces may be written with
 * hyphens or underscores instead (`@help-desk` for "Help desk"). The mention must end the word: `@helpdesk2` does
 * not mention "helpdesk".
 */
export function mentions(text: string, agentName: string): boolean {
  const words = agentName.trim().split(/\s+/).map(escape)
  if (words.length === 0 || words[0] === '') return false
  const pattern = new RegExp(`(^|[^\\p{L}\\p{N}_@])@${words.join('[\\s_-]')}(?![\\p{L}\\p{N}_-])`, 'iu')
  return pattern.test(text)
}

function escape(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
