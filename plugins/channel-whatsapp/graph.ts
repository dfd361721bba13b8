import { cappedBody, ChannelSendError } from '../../src/plugin-host/sdk.ts'

/** Where the Graph API is reached when the operator has not pointed api_base_url elsewhere. */
export const GRAPH_API_BASE_URL = 'https://graph.facebook.com/v21.0'

/** How long one call may take: a Graph API that hangs must not hold the outbox up; the send is tried again. */
const CALL_TIMEOUT_MS = 20_000

/**
 * Graph error codes that mean "too much, too fast" rather than "never": the app's call rate (4), the business
 * account's (80007), the number's throughput (130429), spam limits (131048) and messages to one user (131056).
 */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131048, 131056])

/** What the Graph API answers when it refuses a call. */
interface GraphError {
  message?: string
  type?: string
  code?: number
  error_subcode?: number
  fbtrace_id?: string
}

/** Who calls: the business phone number and the access token of its app. */
export interface GraphCaller {
  baseUrl: string
  phoneNumberId: string
  accessToken: string
}

/** POSTs to the number's /messages edge: sending a message and showing typing both go there. */
export async function postMessages(caller: GraphCaller, body: Record<string, unknown>): Promise<void> {
  const url = `${caller.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(caller.phoneNumberId)}/messages`
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    })
  } catch (error) {
    throw new ChannelSendError(`The WhatsApp Cloud API could not be reached: ${(error as Error).message}`, true)
  }
  if (response.ok) {
    await response.body?.cancel()
    return
  }
  throw refusal(response.status, await graphError(response), retryAfterMs(response))
}

/** The most a medium is downloaded to: WhatsApp's own limit on audio is 16 MB. */
const MEDIA_MAX_BYTES = 20 * 1024 * 1024

/**
 * A medium a person sent: its metadata (GET /{media-id}) names a short-lived download address, which answers the
 * bytes to the same token. Held to a size as it arrives, whatever the metadata or the headers claim.
 */
export async function downloadMedium(caller: GraphCaller, mediaId: string): Promise<{ bytes: Uint8Array; mimeType: string }> {
  const headers = { authorization: `Bearer ${caller.accessToken}` }
  const meta = await fetch(`${caller.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(mediaId)}`, { headers, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) })
  if (!meta.ok) throw refusal(meta.status, await graphError(meta), undefined)
  const { url, mime_type: mimeType, file_size: size } = (await meta.json()) as { url?: string; mime_type?: string; file_size?: number }
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new Error('The Graph API named no address to download the medium from.')
  if ((size ?? 0) > MEDIA_MAX_BYTES) throw new Error(`The medium is larger than ${MEDIA_MAX_BYTES} bytes.`)
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) })
  if (!response.ok) throw new Error(`The medium's download answered ${response.status}.`)
  return { bytes: await cappedBody(response, MEDIA_MAX_BYTES, 'The medium'), mimeType: mimeType ?? 'application/octet-stream' }
}

/** Uploads audio to the number's /media edge; its id is what an audio message names. */
export async function uploadMedium(caller: GraphCaller, bytes: Uint8Array, mimeType: string, filename: string): Promise<string> {
  const form = new FormData()
  form.set('messaging_product', 'whatsapp')
  form.set('type', mimeType)
  form.set('file', new File([bytes as Uint8Array<ArrayBuffer>], filename, { type: mimeType }))
  let response: Response
  try {
    response = await fetch(`${caller.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(caller.phoneNumberId)}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.accessToken}` },
      body: form,
      signal: AbortSignal.timeout(60_000),
    })
  } catch (error) {
    throw new ChannelSendError(`The WhatsApp Cloud API could not be reached: ${(error as Error).message}`, true)
  }
  if (!response.ok) throw refusal(response.status, await graphError(response), retryAfterMs(response))
  const { id } = (await response.json()) as { id?: string }
  if (typeof id !== 'string') throw new ChannelSendError('The WhatsApp Cloud API took the upload but named no media id.', true)
  return id
}

/** The error object of a refusal, or what little the status says when the body is not the Graph API's JSON. */
async function graphError(response: Response): Promise<GraphError> {
  const text = await response.text().catch(() => '')
  try {
    const parsed = JSON.parse(text) as { error?: unknown }
    if (parsed.error && typeof parsed.error === 'object') return parsed.error as GraphError
  } catch {
    // A proxy's HTML page, say: the status alone has to do.
  }
  return { message: text.trim().slice(0, 200) || response.statusText }
}

/** Meta rarely sends Retry-After; when it does, it is the best guess of when to try again. */
function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'))
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined
}

function refusal(status: number, error: GraphError, retryAfter: number | undefined): ChannelSendError {
  const code = typeof error.code === 'number' ? error.code : undefined
  const retryable = status >= 500 || status === 429 || (code !== undefined && RATE_LIMIT_CODES.has(code))
  const codes = [code === undefined ? '' : `code ${code}`, error.error_subcode === undefined ? '' : `subcode ${error.error_subcode}`].filter(Boolean).join(', ')
  const trace = error.fbtrace_id ? ` (fbtrace_id ${error.fbtrace_id})` : ''
  const message = `The WhatsApp Cloud API refused the call (HTTP ${status}${codes ? `, ${codes}` : ''}): ${error.message ?? 'no reason given'}${trace}`
  return new ChannelSendError(message, retryable, retryable ? retryAfter : undefined)
}
