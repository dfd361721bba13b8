import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { describeBytes } from '../../documents/sizes.ts'
import { imageDimensions, MAX_AVATAR_SIDE, sniffAvatarType } from './image.ts'
import { replaceAvatar, type AvatarOwner } from './store.ts'

// Room in the multipart body for what is not the picture: the boundary, the part's headers, a long file name.
const MULTIPART_OVERHEAD = 16 * 1024

const tooLarge = (maxBytes: number) => new ApiError('payload_too_large', `A picture may be at most ${describeBytes(maxBytes)}.`)

/**
 * What runs before the body is read: the caller is known (401 before anything is received), the body is a form
 * (415 rather than "field missing"), and the body is counted as it arrives, refused once past the limit instead
 * of being buffered whole first.
 */
export function avatarUploadGuards(maxBytes: number): [MiddlewareHandler<ApiEnv>, MiddlewareHandler<ApiEnv>] {
  const signedInForm: MiddlewareHandler<ApiEnv> = async (c, next) => {
    requireActor(c.var.actor)
    if (!/^multipart\/form-data\s*;/i.test(c.req.header('content-type') ?? '')) {
      throw new ApiError('unsupported_media_type', 'Send the picture as multipart/form-data with a file part named "file".')
    }
    await next()
  }
  const limit = bodyLimit({
    maxSize: maxBytes + MULTIPART_OVERHEAD,
    onError: () => {
      throw tooLarge(maxBytes)
    },
  })
  return [signedInForm, limit]
}

type UploadContext = Context<ApiEnv, string, { out: { form: { file: File } } }>

/**
 * PUT /api/me/avatar and /api/agents/{id}/avatar: judge the picture by its bytes and header, then store it as the
 * avatar of the owner `ownerOf` names once it has checked the caller may change it.
 */
export function uploadAvatar(maxBytes: number, ownerOf: (c: Context<ApiEnv>) => Promise<AvatarOwner>) {
  return async (c: UploadContext) => {
    const actor = requireActor(c.var.actor)
    const owner = await ownerOf(c)
    const { file } = c.req.valid('form')
    // The body limit leaves room for the form around the file; the file itself is held to the limit exactly.
    if (file.size > maxBytes) throw tooLarge(maxBytes)
    if (file.size === 0) throw invalidPicture('The file is empty.')
    const bytes = new Uint8Array(await file.arrayBuffer())
    const mediaType = await sniffAvatarType(bytes)
    if (!mediaType) throw new ApiError('unsupported_media_type', 'An avatar must be a PNG, JPEG, GIF or WebP picture; this file is none of them, whatever its name.')
    const size = imageDimensions(bytes, mediaType)
    if (!size) throw invalidPicture('The picture’s header cannot be read; the file may be damaged.')
    if (size.width < 1 || size.height < 1 || size.width > MAX_AVATAR_SIDE || size.height > MAX_AVATAR_SIDE) {
      throw invalidPicture(`The picture is ${size.width}×${size.height} pixels; an avatar may be at most ${MAX_AVATAR_SIDE}×${MAX_AVATAR_SIDE}.`)
    }
    const avatar = await replaceAvatar(c.var.services, actor, owner, mediaType, bytes)
    return c.json({ avatar }, 200)
  }
}

function invalidPicture(message: string): ApiError {
  return new ApiError('validation_error', message, { errors: [{ path: 'file', message }] })
}
