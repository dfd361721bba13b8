import { detectDocumentType } from './detect.ts'
import { extractText, type ExtractionLimits } from './extract.ts'
import type { Holder } from './slots.ts'

/**
 * A document judged by its bytes and its text extracted in isolation, for the web chat's uploads and the channels'
 * attachments alike. Throws DocumentError (refused or unreadable) or SlotsBusy (too many reads at once).
 */
export async function readDocument(bytes: Uint8Array, filename: string, holder?: Holder, sandbox?: ExtractionLimits['sandbox']) {
  const mediaType = await detectDocumentType(bytes, filename)
  return { mediaType, ...(await extractText(bytes, mediaType, sandbox ? { sandbox } : {}, holder)) }
}
