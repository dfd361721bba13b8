import type { Hono } from 'hono'
import type { Services } from '../../services.ts'
import type { ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { mountChatPages } from './routes.tsx'
import { chatSocketHandler, upgradeChatSocket, verifySocket } from './socket.ts'
import { ChatSockets } from './sockets.ts'

/** The web chat of the admin port: its page, and `/ws/chat` with the sockets of this process. */
export function createWebChat(services: Services, api: ApiClient) {
  const sockets = new ChatSockets(
    services.events,
    (id) => services.chat.participants(id),
    (ws) => verifySocket(ws, api),
    services.scheduler,
  )
  const origins = [services.config.adminBaseUrl, services.config.baseUrl]
  return {
    sockets,
    /** Bun's WebSocket handler for the admin server. */
    websocket: chatSocketHandler(sockets, api, services.events, services.log),
    /** Before the sign-in redirect: a socket learns it must sign in from its close code (4001). */
    mountSocket: (app: Hono<AdminEnv>) => app.get('/ws/chat', (c) => upgradeChatSocket(c, api, origins)),
    mountPages: (app: Hono<AdminEnv>) => mountChatPages(app, api, services.config.documentMaxBytes, services.config.voice),
    close: () => sockets.close(),
  }
}

export type WebChat = ReturnType<typeof createWebChat>
