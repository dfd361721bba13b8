export const PDF = 'application/pdf'
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
export const TXT = 'text/plain'
export const CSV = 'text/csv'

/** The document types a conversation accepts (DESIGN §4 "Documents"), by the media type stored with each. */
export const DOCUMENT_MEDIA_TYPES = [PDF, DOCX, XLSX, TXT, CSV] as const

export type DocumentMediaType = (typeof DOCUMENT_MEDIA_TYPES)[number]

/** What people call each type, with its article, for messages: "could not be read as a PDF". */
export const DOCUMENT_NAMES: Record<DocumentMediaType, string> = {
  [PDF]: 'a PDF',
  [DOCX]: 'a Word document (DOCX)',
  [XLSX]: 'an Excel workbook (XLSX)',
  [TXT]: 'a text file',
  [CSV]: 'a CSV file',
}

export const ACCEPTED_TYPES = 'PDF, DOCX, XLSX, TXT or CSV'

export function isDocumentMediaType(value: string): value is DocumentMediaType {
  return (DOCUMENT_MEDIA_TYPES as readonly string[]).includes(value)
}
