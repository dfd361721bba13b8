import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { until } from './until.ts'

/**
 * Browser tests drive Debian's Chromium through playwright-core, never a downloaded browser. CI installs it
 * (apt-get install -y chromium); elsewhere the browser tests skip, saying so.
 */
export const CHROMIUM = '/usr/bin/chromium'
export const HAS_CHROMIUM = existsSync(CHROMIUM)

/** Says once, for the file, why its browser tests skip. */
export function warnWithoutChromium(): void {
  if (!HAS_CHROMIUM) console.warn(`Browser tests skipped: ${CHROMIUM} is not installed (apt-get install -y chromium).`)
}

/** Chromium, headless; `args` adds switches (a fake microphone for the voice tests). */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
  })
}

/** Switches that make Chromium's microphone play this WAV file, with no prompt for the permission. */
export function fakeMicrophone(wavPath: string): string[] {
  return ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wavPath}`, '--autoplay-policy=no-user-gesture-required']
}

/** A report of the browser's securitypolicyviolation event. */
export interface Violation {
  page: string
  directive: string
  /** The URL blocked, or `inline`. */
  blocked: string
  sample: string
  /** Where in which script the blocked thing was met (`file:line:column`). */
  source: string
}

/**
 * What a browser context's pages did that no page of the platform should: a Content-Security-Policy violation
 * (a load, inline code or eval it blocked), a request outside the origins the context was meant to use, a dialog.
 */
export interface Watched {
  violations: Violation[]
  foreign: string[]
  dialogs: string[]
}

declare global {
  interface Window {
    /** Every WebSocket a page opened, in order (see watchContext). */
    __sockets: WebSocket[]
    reportCspViolation(violation: Violation): void
  }
}

/**
 * A context whose pages report CSP violations and dialogs, whose requests are checked against `origins`, and
 * whose WebSockets are kept in `window.__sockets`, so that a test can wait for a page's socket to be open
 * instead of sleeping. The init scripts run through the DevTools protocol, outside the page's policy.
 */
export async function watchContext(context: BrowserContext, origins: readonly string[], watched: Watched): Promise<void> {
  const allowed = new Set(origins.map((url) => new URL(url).origin))
  context.setDefaultTimeout(10_000)
  context.on('request', (request) => {
    const url = request.url()
    if (!allowed.has(new URL(url).origin)) watched.foreign.push(url)
  })
  context.on('page', (page) =>
    page.on('dialog', (dialog) => {
      watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`)
      void dialog.dismiss().catch(() => {})
    }),
  )
  await context.exposeFunction('reportCspViolation', (violation: Violation) => watched.violations.push(violation))
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.reportCspViolation({ page: e.documentURI, directive: e.effectiveDirective, blocked: e.blockedURI || 'inline', sample: e.sample, source: `${e.sourceFile}:${e.lineNumber}:${e.columnNumber}` }),
    )
    const Native = window.WebSocket
    const sockets: WebSocket[] = []
    window.__sockets = sockets
    window.WebSocket = class extends Native {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args)
        sockets.push(this)
      }
    }
  })
}

/** The session cookie(s) of a `name=value; name2=value2` header, for the browser to send to `url`. */
export async function addSessionCookie(context: BrowserContext, url: string, cookie: string): Promise<void> {
  const cookies = cookie.split(/;\s*/).filter(Boolean).map((pair) => {
    const at = pair.indexOf('=')
    return { name: pair.slice(0, at), value: pair.slice(at + 1), url }
  })
  await context.addCookies(cookies)
}

/** Waits until the page's latest WebSocket is open: what it is told from then on, it hears live. */
export async function socketOpen(page: Page, what = 'the page’s chat socket to open'): Promise<void> {
  await until(() => page.evaluate(() => window.__sockets?.at(-1)?.readyState === WebSocket.OPEN), { what, timeoutMs: 10_000 })
}

/** Waits until `read` answers `expected` (a page's text, an attribute…), naming both in the failure. */
export async function untilEqual<T>(read: () => Promise<T>, expected: T, what: string, timeoutMs = 10_000): Promise<void> {
  let last: T | undefined
  try {
    await until(
      async () => {
        last = await read()
        return Bun.deepEquals(last, expected)
      },
      { what, timeoutMs },
    )
  } catch (error) {
    throw new Error(`${(error as Error).message} Expected ${JSON.stringify(expected)}, last saw ${JSON.stringify(last)}.`, { cause: error })
  }
}

interface Pipe {
  socket?: Bun.Socket<Pipe>
  peer?: Pipe
  /** Bytes the socket did not take yet (it was full, or not yet connected), in order. */
  queue: Uint8Array[]
  /** The other side closed: close this one too once its queue is written. */
  ending: boolean
  /** The first line this side received (for the client side: the request line). */
  first?: string
}

/** A TCP connection through the proxy, client side, with the first request line it carried. */
export interface Connection {
  requestLine: string
  open: boolean
}

export interface TcpProxy {
  url: string
  port: number
  /** Where the bytes go, set later when the proxy's port had to be known first (e.g. for a base URL). */
  forwardTo(port: number): void
  /** Every connection a client made, in order. */
  connections: Connection[]
  /** Drops every open connection, both ends at once, as a balancer restarting or a network failure does. */
  cut(): number
  stop(): void
}

function flush(pipe: Pipe): void {
  const socket = pipe.socket
  if (!socket) return
  while (pipe.queue.length > 0) {
    const chunk = pipe.queue[0]!
    const written = socket.write(chunk)
    if (written < chunk.length) {
      pipe.queue[0] = chunk.subarray(Math.max(0, written))
      return
    }
    pipe.queue.shift()
  }
  if (pipe.ending) socket.end()
}

function pass(to: Pipe | undefined, chunk: Uint8Array): void {
  if (!to) return
  // Bun may reuse the buffer it handed over: what waits is copied.
  to.queue.push(new Uint8Array(chunk))
  flush(to)
}

function finish(pipe: Pipe | undefined): void {
  if (!pipe || pipe.ending) return
  pipe.ending = true
  flush(pipe)
}

/**
 * A TCP proxy on a free loopback port that passes bytes both ways untouched (HTTP, WebSocket upgrades and
 * frames alike) and can cut every connection at once: what the browser sees when the server side goes away.
 */
export function startTcpProxy(port?: number): TcpProxy {
  let target = port
  const open = new Map<Pipe, Connection>()
  const connections: Connection[] = []
  const server = Bun.listen<Pipe>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const near: Pipe = { socket: client, queue: [], ending: false }
        const far: Pipe = { queue: [], ending: false, peer: near }
        near.peer = far
        client.data = near
        const connection: Connection = { requestLine: '', open: true }
        connections.push(connection)
        open.set(near, connection)
        if (target === undefined) {
          client.terminate()
          return
        }
        Bun.connect<Pipe>({
          hostname: '127.0.0.1',
          port: target,
          data: far,
          socket: {
            open(upstream) {
              far.socket = upstream
              flush(far)
            },
            data: (_, chunk) => pass(near, chunk),
            drain: (upstream) => flush(upstream.data),
            close: () => finish(near),
            error: () => finish(near),
          },
        }).catch(() => client.terminate())
      },
      data(client, chunk) {
        const near = client.data
        const connection = open.get(near)
        if (connection && !connection.requestLine) connection.requestLine = new TextDecoder().decode(chunk.subarray(0, 200)).split('\r\n')[0]!
        pass(near.peer, chunk)
      },
      drain: (client) => flush(client.data),
      close(client) {
        const connection = open.get(client.data)
        if (connection) connection.open = false
        open.delete(client.data)
        finish(client.data.peer)
      },
      error: (client) => finish(client.data.peer),
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    forwardTo: (p) => (target = p),
    connections,
    cut() {
      const pipes = [...open.keys()]
      for (const near of pipes) {
        open.get(near)!.open = false
        open.delete(near)
        near.socket?.terminate()
        near.peer?.socket?.terminate()
      }
      return pipes.length
    },
    stop() {
      this.cut()
      server.stop(true)
    },
  }
}
