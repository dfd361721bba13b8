/**
 * An answer written in Markdown as it should be said: code is not read out character by character (a fenced block
 * is named, inline code keeps its words), links say their text, and the marks of emphasis, headings, quotes and
 * lists are not pronounced.
 */
export function spokenText(markdown: string): string {
  return markdown
    .replace(/```[^\n]*\n[\s\S]*?(```|$)/g, '\n(There is code in the written answer.)\n')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/^[ \t]{0,3}(#{1,6}|>+|[-*+]|\d+[.)])[ \t]+/gm, '')
    .replace(/(\*\*|__|\*|_|~~)(?=\S)([^*_~\n]+?)\1/g, '$2')
    .replace(/^[ \t]*([-*_][ \t]*){3,}$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
