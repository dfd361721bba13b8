import { mkdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Page } from 'playwright-core'

/**
 * Accessibility checks for browser tests: axe-core, from node_modules, run inside the page, plus the few things
 * axe rates only "moderate" that every console page must still have (one h1, a lang, a main landmark).
 */

/** The WCAG 2.1 A and AA rules and axe's best practices. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] as const
/** What fails a test; minor and moderate findings are returned, and printed, but pass. */
const FAILING = new Set(['serious', 'critical'])

/** One axe finding, as much of it as a developer needs to find and fix it. */
export interface AxeViolation {
  id: string
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null
  help: string
  helpUrl: string
  nodes: Array<{ target: unknown[]; failureSummary?: string }>
}

declare global {
  interface Window {
    axe?: { run(context: Document, options: unknown): Promise<{ violations: AxeViolation[] }> }
  }
}

let axeSource: string | undefined
async function loadAxe(): Promise<string> {
  axeSource ??= await Bun.file(Bun.fileURLToPath(import.meta.resolve('axe-core/axe.min.js'))).text()
  return axeSource
}

/** What a developer reads in the failure: rule, impact, what to do and where (the first few selectors). */
export function describeViolations(label: string, violations: AxeViolation[]): string {
  const lines = violations.map((v) => {
    const targets = v.nodes.slice(0, 3).map((n) => n.target.map(String).join(' '))
    const more = v.nodes.length > 3 ? ` (+${v.nodes.length - 3} more)` : ''
    const why = v.nodes[0]?.failureSummary?.split('\n').slice(1, 2).join('').trim()
    return `  - ${v.id} [${v.impact}] ${v.help}\n      at ${targets.join(' | ')}${more}${why ? `\n      ${why}` : ''}\n      ${v.helpUrl}`
  })
  return `${label}: ${violations.length} accessibility violation(s)\n${lines.join('\n')}`
}

/**
 * Runs axe on the page as it is now and fails on any serious or critical violation, naming each; returns every
 * violation found (the lesser ones too, which are printed as a warning).
 *
 * axe is evaluated through the DevTools protocol (page.evaluate of its source), which the page's
 * Content-Security-Policy does not govern: the console allows only its own origin's script files, so a <script>
 * tag with the source inline (addScriptTag) would be blocked, and serving axe from the console would ship a test
 * tool in the product. Nothing is fetched from anywhere else.
 *
 * `preload: false`: otherwise axe re-reads the page's stylesheets and copies some into inline <style> elements,
 * which the page's policy rightly blocks (and the tests count as violations). The one rule that needs them,
 * css-orientation-lock, then cannot decide; the console has no orientation media queries.
 */
export async function checkAccessibility(page: Page, label: string): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(await loadAxe())
  const violations = await page.evaluate(
    async (tags) => (await window.axe!.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'], preload: false })).violations.map(({ id, impact, help, helpUrl, nodes }) => ({ id, impact, help, helpUrl, nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })) })),
    [...AXE_TAGS],
  )
  const failing = violations.filter((v) => v.impact && FAILING.has(v.impact))
  const lesser = violations.filter((v) => !failing.includes(v))
  if (lesser.length > 0) console.warn(describeViolations(`${label} (minor/moderate, not failing)`, lesser))
  if (failing.length > 0) throw new Error(describeViolations(label, failing))
  return violations
}

/** What every console page has, whatever axe rates it: one h1, a language, one main landmark. */
export async function checkPageStructure(page: Page, label: string): Promise<void> {
  const found = await page.evaluate(() => ({
    h1: document.querySelectorAll('h1').length,
    lang: document.documentElement.getAttribute('lang') ?? '',
    main: document.querySelectorAll('main, [role=main]').length,
    title: document.title,
  }))
  const problems = [
    found.h1 === 1 ? '' : `has ${found.h1} <h1> elements, not exactly one`,
    found.lang.trim() ? '' : 'has no lang attribute on <html>',
    found.main === 1 ? '' : `has ${found.main} <main> landmarks, not exactly one`,
    found.title.trim() ? '' : 'has no <title>',
  ].filter(Boolean)
  if (problems.length > 0) throw new Error(`${label}: ${problems.join('; ')}`)
}

/** Screenshots for a person to look at; not committed (see .gitignore). */
export const SCREENSHOT_DIR = join(import.meta.dir, '..', '.screenshots')
let announced = false

/** A full-page PNG named `name` in SCREENSHOT_DIR; the folder is printed once per run. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  if (!announced) {
    announced = true
    console.info(`Screenshots: ${relative(process.cwd(), SCREENSHOT_DIR) || SCREENSHOT_DIR}`)
  }
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** The computed style properties that make a focus indicator. */
export interface FocusStyle {
  outlineStyle: string
  outlineWidth: string
  outlineColor: string
  boxShadow: string
  /** The colour behind the element (the nearest ancestor with an opaque background), for the ring's contrast. */
  background: string
}

/** The focus-related computed style of the element `selector` matches, as it is now. */
export function focusStyle(page: Page, selector: string): Promise<FocusStyle> {
  return page.locator(selector).first().evaluate((el) => {
    const style = getComputedStyle(el)
    let behind: Element | null = el.parentElement
    let background = 'rgb(255, 255, 255)'
    while (behind) {
      const color = getComputedStyle(behind).backgroundColor
      if (color && color !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(color)) {
        background = color
        break
      }
      behind = behind.parentElement
    }
    return { outlineStyle: style.outlineStyle, outlineWidth: style.outlineWidth, outlineColor: style.outlineColor, boxShadow: style.boxShadow, background }
  })
}

/** WCAG contrast ratio of two `rgb()`/`rgba()` colours (alpha ignored). */
export function contrastRatio(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, b] = (color.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((n) => {
      const c = Number(n) / 255
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}
