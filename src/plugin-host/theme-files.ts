import { existsSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, sep } from 'node:path'
import type { Manifest } from './manifest.ts'

/** The files a theme plugin ships, as absolute paths inside its folder. */
export interface ThemeFiles {
  css?: string
  logo?: string
}

/** Logo types a browser shows in an <img>, by extension. */
export const LOGO_TYPES: Record<string, string> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  ico: 'image/x-icon',
}

/**
 * A theme's `ui`: `{ "css": "theme.css", "logo": "logo.svg" }`, both optional, files inside the plugin's folder. A path that
 * leaves the folder (by `..`, an absolute path or a symbolic link) is refused: the server would otherwise hand out
 * any file it can read. Problems name the field, e.g. `ui.logo: ...`.
 */
export function themeFiles(manifest: Manifest, dir: string): { files?: ThemeFiles; problems: string[] } {
  if (manifest.kind !== 'theme') return { problems: [] }
  const ui = manifest.ui ?? {}
  const problems: string[] = []
  for (const key of Object.keys(ui)) if (key !== 'css' && key !== 'logo') problems.push(`ui.${key}: unknown field (a theme names css and, optionally, logo)`)
  const file = (field: 'css' | 'logo', extensions: string[]): string | undefined => {
    const path = ui[field]
    if (path === undefined) return undefined
    if (typeof path !== 'string' || path === '') return void problems.push(`ui.${field}: must name a file of the plugin folder, e.g. ${field === 'css' ? 'theme.css' : 'logo.svg'}`)
    const extension = path.split('.').pop()?.toLowerCase() ?? ''
    if (!extensions.includes(extension)) return void problems.push(`ui.${field}: must end in .${extensions.join(', .')}`)
    if (isAbsolute(path) || path.split(/[\\/]/).includes('..')) return void problems.push(`ui.${field}: must stay inside the plugin folder`)
    const full = join(dir, path)
    if (!existsSync(full) || !statSync(full).isFile()) return void problems.push(`ui.${field}: ${path} does not exist in the plugin folder`)
    const inside = relative(realpathSync(dir), realpathSync(full))
    if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) return void problems.push(`ui.${field}: must stay inside the plugin folder`)
    return full
  }
  const css = file('css', ['css'])
  const logo = file('logo', Object.keys(LOGO_TYPES))
  return problems.length === 0 ? { files: { ...(css ? { css } : {}), ...(logo ? { logo } : {}) }, problems } : { problems }
}
