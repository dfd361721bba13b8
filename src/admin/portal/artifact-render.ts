import { Marked } from 'marked'
import Papa from 'papaparse'
import type { SharedArtifact } from '../../artifacts/artifacts.ts'

/**
 * How a shared artifact's own document is answered. Every one carries the CSP `sandbox` directive, so even opened
 * on its own (not in the share page's sandboxed frame) it runs in an opaque origin: no cookie, no storage, no
 * same-origin request to the platform. Nothing may be loaded from anywhere (no tracking of who opens a link), and
 * only the share page may frame it.
 */
const COMMON = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

/** HTML artifacts may run their own inline script and style, sealed off: no network, no origin, no popups. */
export const HTML_POLICY = `${COMMON}; connect-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; media-src data: blob:; font-src data:; sandbox allow-scripts`
/** Documents the platform renders (markdown, text, JSON, CSV) run no script at all. */
export const RENDERED_POLICY = `${COMMON}; style-src 'unsafe-inline'; img-src data:; sandbox`
/** Pictures, and every download: nothing in them runs or loads. */
export const INERT_POLICY = `${COMMON}; sandbox`

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

const SAFE_LINK = /^(?:https?:|mailto:|#)/i

/**
 * Markdown to HTML with marked, raw HTML shown as text and links kept to http(s), mail and anchors. The frame it
 * lands in runs no script whatever slips through, so this is about a faithful, tidy page, not the boundary.
 */
const markdown = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    link({ href, title, tokens }) {
      const text = this.parser.parseInline(tokens)
      if (!SAFE_LINK.test(href.trim())) return text
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ''} rel="noopener noreferrer nofollow" target="_blank">${text}</a>`
    },
    // Pictures from elsewhere would tell their server who opened the link; the policy blocks them, this says so.
    image: ({ href, text }) => (/^data:image\//i.test(href) ? `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}">` : `<span class="blocked">[picture not shown: ${escapeHtml(text || href)}]</span>`),
  },
})

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 1.5rem; color: #1b1b1f; background: #fff; }
  pre { white-space: pre-wrap; word-break: break-word; font: 14px/1.45 ui-monospace, monospace; }
  table { border-collapse: collapse; }
  th, td { border: 1px solid #8a8a94; padding: .25rem .5rem; text-align: left; vertical-align: top; }
  th { background: #eef0f4; }
  .blocked { color: #5b5b66; font-style: italic; }
  img { max-width: 100%; }
`

function document(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

function table(csv: string): string {
  const { data } = Papa.parse<string[]>(csv, { skipEmptyLines: true })
  if (data.length === 0) return '<p>The table is empty.</p>'
  const [head, ...rows] = data
  const cells = (row: string[], tag: 'th' | 'td') => row.map((cell) => `<${tag}${tag === 'th' ? ' scope="col"' : ''}>${escapeHtml(cell)}</${tag}>`).join('')
  return `<table><thead><tr>${cells(head!, 'th')}</tr></thead><tbody>${rows.map((row) => `<tr>${cells(row, 'td')}</tr>`).join('')}</tbody></table>`
}

function pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2)
  } catch {
    return json
  }
}

/** The artifact as its frame shows it: the body, its type and its policy. */
export function renderArtifact(artifact: SharedArtifact): { body: Uint8Array | string; contentType: string; policy: string } {
  const text = () => new TextDecoder().decode(artifact.content)
  switch (artifact.mediaType) {
    case 'text/html':
      return { body: artifact.content, contentType: 'text/html; charset=utf-8', policy: HTML_POLICY }
    case 'text/markdown':
      return { body: document(artifact.title, `<main>${markdown.parse(text(), { async: false })}</main>`), contentType: 'text/html; charset=utf-8', policy: RENDERED_POLICY }
    case 'text/csv':
      return { body: document(artifact.title, `<main>${table(text())}</main>`), contentType: 'text/html; charset=utf-8', policy: RENDERED_POLICY }
    case 'application/json':
      return { body: document(artifact.title, `<pre>${escapeHtml(pretty(text()))}</pre>`), contentType: 'text/html; charset=utf-8', policy: RENDERED_POLICY }
    case 'text/plain':
      return { body: document(artifact.title, `<pre>${escapeHtml(text())}</pre>`), contentType: 'text/html; charset=utf-8', policy: RENDERED_POLICY }
    default:
      return { body: artifact.content, contentType: artifact.mediaType, policy: INERT_POLICY }
  }
}

const EXTENSIONS: Record<string, string> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'application/json': 'json',
  'text/csv': 'csv',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
}

/** A file name for a download, safe in a header: the title's ASCII letters, digits and dashes, and the type's extension. */
export function downloadName(artifact: Pick<SharedArtifact, 'title' | 'mediaType'>): string {
  const stem = artifact.title.replace(/[^A-Za-z0-9._ -]+/g, '').trim().replace(/\s+/g, '-').replace(/^\.+/, '').slice(0, 80) || 'artifact'
  return `${stem}.${EXTENSIONS[artifact.mediaType] ?? 'bin'}`
}
