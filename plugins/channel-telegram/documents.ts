import type { Document } from 'grammy/types'
import type { ChannelEndpoint, InboundAttachment, PluginContext } from '../../src/plugin-host/sdk.ts'
import { apiRoot, botApi, botToken } from './bot-api.ts'

/** The Bot API lets a bot download files of up to 20 MB; larger ones have no download link. */
const DOCUMENT_MAX_BYTES = 20 * 1024 * 1024

async function cappedBytes(response: Response, name: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? 0)
  if (declared > DOCUMENT_MAX_BYTES) throw new Error(`${name} is larger than ${DOCUMENT_MAX_BYTES} bytes.`)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body ?? []) {
    size += chunk.length
    // The header may be absent or wrong: the count of what actually arrives decides.
    if (size > DOCUMENT_MAX_BYTES) throw new Error(`${name} is larger than ${DOCUMENT_MAX_BYTES} bytes.`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** A document a person sent, fetched from Telegram (getFile, then the file link) for the agent to read. */
export async function downloadDocument(context: PluginContext, endpoint: ChannelEndpoint<'telegram'>, document: Document): Promise<InboundAttachment> {
  const name = document.file_name || 'document'
  if ((document.file_size ?? 0) > DOCUMENT_MAX_BYTES) throw new Error(`${name} is larger than the ${DOCUMENT_MAX_BYTES} bytes a bot may download.`)
  const file = await (await botApi(context, endpoint)).getFile(document.file_id)
  if (!file.file_path) throw new Error(`Telegram gave no download path for ${name}.`)
  const response = await fetch(`${apiRoot(context)}/file/bot${await botToken(endpoint)}/${file.file_path}`, { signal: AbortSignal.timeout(60_000) })
  if (!response.ok) throw new Error(`Telegram answered ${response.status} to the download of ${name}.`)
  return { name, base64: Buffer.from(await cappedBytes(response, name)).toString('base64') }
}
