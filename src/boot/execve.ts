import { dlopen, FFIType, ptr, read, type Pointer } from 'bun:ffi'
import { constants } from 'node:os'

/**
 * The two libc calls a re-exec with an inherited pipe needs. Bun's own process.execve marks every descriptor above
 * stderr close-on-exec before it calls execve(2), and its pipes are close-on-exec too, so both come from libc.
 */
export interface Libc {
  /** A pipe whose ends survive execve(2) (no O_CLOEXEC). */
  pipe(): { readFd: number; writeFd: number }
  /** Replaces the process image, keeping its pid; returns only on failure, with the reason. */
  execve(file: string, argv: string[], env: string[]): string
}

/** Binds libc through bun:ffi; the reason as a string when that is impossible here. */
export function openLibc(): Libc | string {
  // glibc's soname; musl's loader answers every libc.so* name with itself.
  let library
  try {
    library = dlopen('libc.so.6', {
      pipe: { args: [FFIType.ptr], returns: FFIType.i32 },
      execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
      __errno_location: { args: [], returns: FFIType.ptr },
    })
  } catch (error) {
    return `libc is out of reach (${(error as Error).message})`
  }
  const { symbols } = library
  const errno = () => {
    const code = read.i32(symbols.__errno_location() as Pointer)
    return Object.entries(constants.errno).find(([, value]) => value === code)?.[0] ?? `errno ${code}`
  }
  return {
    pipe() {
      const fds = new Int32Array(2)
      if (symbols.pipe(ptr(fds)) !== 0) throw new Error(`pipe failed: ${errno()}`)
      return { readFd: fds[0]!, writeFd: fds[1]! }
    },
    execve(file, argv, env) {
      // The buffers stay referenced here until execve returns, so the pointers in the arrays stay valid.
      const path = cString(file)
      const args = cStringArray(argv)
      const vars = cStringArray(env)
      symbols.execve(ptr(path), ptr(args.pointers), ptr(vars.pointers))
      return `execve failed: ${errno()}`
    },
  }
}

function cString(text: string): Buffer {
  return Buffer.from(`${text}\0`)
}

/** A NULL-terminated char*[] and the buffers its pointers point into. */
function cStringArray(list: string[]): { pointers: BigUint64Array; strings: Buffer[] } {
  const strings = list.map(cString)
  const pointers = new BigUint64Array(list.length + 1)
  strings.forEach((string, index) => {
    pointers[index] = BigInt(ptr(string))
  })
  return { pointers, strings }
}
