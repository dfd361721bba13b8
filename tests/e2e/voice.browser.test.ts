import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { fileTypeFromBuffer } from 'file-type'
import { checkAccessibility } from '../helpers/accessibility.ts'
import { addSessionCookie, fakeMicrophone, HAS_CHROMIUM, launchChromium, socketOpen, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { HAS_SPEECH_TOOLS, speech } from '../helpers/speech.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// The web chat records a voice note from Chromium's fake microphone (real speech made by espeak-ng), shows its
// transcript as the person's message with the recording beside it, and plays the agent's spoken answer.

warnWithoutChromium()

const RUNS = HAS_CHROMIUM && HAS_SPEECH_TOOLS
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir()
const provider = startFakeOpenAI()
let browser: Browser
let p: ChatPlatform
let agent: string
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!RUNS) return
  const microphone = join(mkdtempSync(join(tmpdir(), 'microphone-')), 'said.wav')
  writeFileSync(microphone, speech('please summarise my day', 'wav'))
  ;[browser, p] = await Promise.all([launchChromium(fakeMicrophone(microphone)), startChatPlatform(openAIRunnerEnv(provider))])
  const made = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'speaker', runner: 'echo', model: 'echo-1', voice: { enabled: true, provider: 'openai' } } })
  expect(made.status).toBe(201)
  agent = made.body.id
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
  provider.stop()
})

test.skipIf(!RUNS)('a voice note recorded in the browser is sent as its transcript, kept to play, and answered aloud', async () => {
  // Chromium records WebM/Opus of its own making, so the fake cannot know it by its bytes: it hears these words.
  provider.hearing.unknownSpeech = 'Please summarise my day.'
  const person = await p.person()
  const conversation = (await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent }, as: person })).body.id as string
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat/${conversation}`)
  await socketOpen(page)

  const record = page.getByRole('button', { name: 'Record a voice note' })
  await record.click()
  const stop = page.getByRole('button', { name: 'Stop recording and send' })
  await stop.waitFor()
  expect(await stop.getAttribute('aria-pressed')).toBe('true')
  await page.waitForTimeout(2_500)
  await stop.click()

  // The person's message is the transcript, with the recording to play beside it.
  const said = page.locator('#messages li.msg-user', { hasText: 'Please summarise my day.' })
  await said.waitFor()
  await said.locator('li.voice audio').waitFor()
  const heard = provider.audio.find((a) => a.path === '/v1/audio/transcriptions')!
  expect((await fileTypeFromBuffer(heard.file!.bytes))?.ext).toBe('webm')
  expect(heard.file!.bytes.length).toBeGreaterThan(2_000)

  // The answer is written, then spoken: a player appears under it, and Chromium plays the OGG/Opus it gets.
  const answer = page.locator('#messages li.msg-agent', { hasText: 'Echo: Please summarise my day.' })
  await answer.waitFor()
  const spoken = answer.locator('li.voice audio')
  await spoken.waitFor({ timeout: 15_000 })
  expect(await answer.locator('li.voice').textContent()).toContain('Spoken answer')
  const played = await spoken.evaluate(
    (audio: HTMLAudioElement) =>
      new Promise<{ duration: number; time: number; error: number | null }>((resolve) => {
        audio.addEventListener('timeupdate', () => audio.currentTime > 0.2 && resolve({ duration: audio.duration, time: audio.currentTime, error: null }))
        audio.addEventListener('error', () => resolve({ duration: 0, time: 0, error: audio.error?.code ?? -1 }))
        void audio.play().catch(() => resolve({ duration: 0, time: 0, error: -2 }))
      }),
  )
  expect(played.error).toBeNull()
  // Served from the page's origin as audio that can never run as a page.
  const served = await page.request.get(`${p.adminUrl}${await spoken.getAttribute('src')}`)
  expect(served.headers()['content-type']).toBe('audio/ogg')
  expect(served.headers()['content-security-policy']).toContain("default-src 'none'")
  expect(served.headers()['x-content-type-options']).toBe('nosniff')
  const stranger = await p.person()
  const strangers = await browser.newContext()
  await addSessionCookie(strangers, p.adminUrl, stranger.cookie)
  expect((await strangers.request.get(`${p.adminUrl}${await spoken.getAttribute('src')}`)).status()).toBe(404)
  await strangers.close()
  expect(played.duration).toBeGreaterThan(1)
  expect(played.time).toBeGreaterThan(0.2)

  // After a reload both players are drawn with the page.
  await page.reload()
  await socketOpen(page)
  await page.locator('#messages li.msg-user li.voice audio').waitFor()
  await page.locator('#messages li.msg-agent li.voice audio').waitFor()
  await checkAccessibility(page, 'voice notes in the web chat')
  await page.screenshot({ path: `${SCREENSHOTS}/voice-1280.png`, caret: 'initial' })
  await context.close()
}, 60_000)

test.skipIf(!RUNS)('a recording the agent cannot hear is refused in words on the page, and nothing is sent', async () => {
  provider.hearing.failWith = 500
  const person = await p.person()
  const conversation = (await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent }, as: person })).body.id as string
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  try {
    await page.goto(`${p.adminUrl}/chat/${conversation}`)
    await socketOpen(page)
    await page.getByRole('button', { name: 'Record a voice note' }).click()
    await page.waitForTimeout(1_000)
    await page.getByRole('button', { name: 'Stop recording and send' }).click()
    await page.getByText('could not be transcribed', { exact: false }).first().waitFor()
    expect(await page.locator('#messages li.msg-user').count()).toBe(0)
  } finally {
    provider.hearing.failWith = null
    await context.close()
  }
}, 60_000)

test.skipIf(!RUNS)('no page broke its Content-Security-Policy, loaded anything from another origin or opened a dialog', () => {
  expect(watched.violations).toEqual([])
  expect(watched.foreign).toEqual([])
  expect(watched.dialogs).toEqual([])
})
