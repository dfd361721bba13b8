import { definePlugin, personOf, toolInput, z, type CallToolResult, type PluginContext, type VirtualTool } from '../../src/plugin-host/sdk.ts'

const KINDS = ['text', 'markdown', 'html', 'json', 'csv', 'image'] as const
const days = (what: string) => z.int().min(1).max(365).describe(what)

const CreateInput = toolInput(
  z.strictObject({
    title: z.string().max(300).describe('What it is, as the user will see it listed.'),
    kind: z.enum(KINDS),
    content: z.string().describe('The text, or for an image its bytes in base64.'),
    ttl_days: days('Days until it expires unless pinned (default 30).').nullish(),
  }),
)
const ListInput = toolInput(z.strictObject({}))
const ShareInput = toolInput(
  z.strictObject({
    id: z.string().describe('The artifact’s id.'),
    expires_in_days: days('How long the link works; by default until the artifact expires.').nullish(),
  }),
)

const readable = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')

/** The answer as text for the model, and as data for an MCP host that reads structured results. */
function answer(sentence: string, data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: sentence }], structuredContent: data }
}

function tools(context: PluginContext): VirtualTool[] {
  // The kernel's services exist once boot is over: read when a tool runs, never at setup.
  const artifacts = () => context.kernel.artifacts
  return [
    {
      name: 'create_artifact',
      description:
        'Hand the user a document, page, table or picture as an artifact with a share link they can open or pass on. ' +
        'kind: text, markdown, html (rendered in a sandboxed frame: inline script and style work, nothing is fetched from the network), ' +
        'json, csv, or image (PNG, JPEG, GIF or WebP as base64; for SVG make an html artifact with the <svg> inline). ' +
        'Text up to 1 MiB, images up to 5 MiB. It expires after ttl_days (default 30) unless the user pins it. Answers the share link.',
      inputSchema: CreateInput.inputSchema,
      async run(args, call) {
        const { turn } = call
        const user = personOf(call)
        const { title, kind, content, ttl_days } = CreateInput.parse(args)
        const { record } = await artifacts().create(user, {
          title,
          kind,
          content,
          ...(ttl_days == null ? {} : { ttl_days }),
          ...(turn ? { conversation_id: turn.conversationId, agent_id: turn.agentId } : {}),
        })
        const link = await artifacts().shareLink(user, record.id)
        return answer(`Created the artifact "${record.title}" (${record.media_type}). Share link, working until ${readable(link.expires_at)}: ${link.url}`, {
          id: record.id,
          title: record.title,
          media_type: record.media_type,
          url: link.url,
          expires_at: link.expires_at,
        })
      },
    },
    {
      name: 'list_artifacts',
      description: 'The user’s artifacts, newest first: id, title, type and whether each is pinned, revoked or when it expires.',
      inputSchema: ListInput.inputSchema,
      async run(args, call) {
        ListInput.parse(args)
        const user = personOf(call)
        const listed = await artifacts().list(user, 50)
        if (listed.length === 0) return 'The user has no artifacts.'
        const lines = listed.map((a) => {
          const state = a.revoked_at ? 'revoked' : a.pinned ? 'pinned' : `expires ${readable(a.expires_at ?? '')}`
          return `- ${a.id} "${a.title}" (${a.media_type}, ${state})`
        })
        return answer(lines.join('\n'), { artifacts: listed.map(({ id, title, media_type, pinned, expires_at, revoked_at }) => ({ id, title, media_type, pinned, expires_at, revoked_at })) })
      },
    },
    {
      name: 'share_artifact',
      description: 'A new share link to one of the user’s artifacts (by id), e.g. when an earlier link has expired. A revoked artifact cannot be shared.',
      inputSchema: ShareInput.inputSchema,
      async run(args, call) {
        const user = personOf(call)
        const { id, expires_in_days } = ShareInput.parse(args)
        const link = await artifacts().shareLink(user, id, expires_in_days ?? undefined)
        return answer(`Share link, working until ${readable(link.expires_at)}: ${link.url}`, link)
      },
    },
  ]
}

export default definePlugin({
  setup(context) {
    context.registerTools(tools(context))
  },
})
