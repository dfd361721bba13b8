import { cappedBody, type ChannelEndpoint, type InboundAttachment, type PluginContext } from '../../src/plugin-host/sdk.ts'
import { apiRoot, botApi, botToken } from './bot-api.ts'
import type { TelegramFile } from './update.ts'

/** The Bot API lets a bot download files of up to 20 MB; larger ones have no download link. */
const DOCUMENT_MAX_BYTES = 20 * 1024 * 1024

/** A file a person sent (a document, a voice note), fetched from Telegram (getFile, then the file link) for the agent. */
export async function downloadFile(context: PluginContext, endpoint: ChannelEndpoint<'telegram'>, sent: TelegramFile): Promise<InboundAttachment> {
  const { name } = sent
  if ((sent.file_size ?? 0) > DOCUMENT_MAX_BYTES) throw new Error(`${name} is larger than the ${DOCUMENT_MAX_BYTES} bytes a bot may download.`)
  const file = await (await botApi(context, endpoint)).getFile(sent.file_id)
  if (!file.file_path) throw new Error(`Telegram gave no download path for ${name}.`)
  const response = await fetch(`${apiRoot(context)}/file/bot${await botToken(endpoint)}/${file.file_path}`, { signal: AbortSignal.timeout(60_000) })
  if (!response.ok) throw new Error(`Telegram answered ${response.status} to the download of ${name}.`)
  return { name, base64: Buffer.from(await cappedBody(response, DOCUMENT_MAX_BYTES, name)).toString('base64') }
}
