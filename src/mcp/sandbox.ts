import { VAULT_SOCKET_INSIDE } from '../vault/socket.ts'
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'

/** Where the platform is installed: its node_modules hold the MCP servers the catalogue usually names. */
const INSTALL_DIR = resolve(import.meta.dir, '..', '..')

/** System folders a program needs to run, shown read-only. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt']

/**
 * The few files of /etc a program needs (name resolution, certificates, time zone, users' names); the rest of
 * /etc (server configurations, shadow passwords, the operator's files) stays out of sight.
 */
const ETC_FILES = [
  'resolv.conf', 'hosts', 'host.conf', 'gai.conf', 'nsswitch.conf', 'passwd', 'group', 'localtime', 'timezone',
  'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki', 'alternatives', 'ld.so.cache', 'ld.so.conf',
  'ld.so.conf.d', 'mime.types', 'protocols', 'services',
]

export interface SandboxSettings {
  mode: 'bwrap' | 'none'
  /** The platform's data directory: never visible inside. */
  dataDir: string
  /** The bubblewrap program; found on PATH when not given. */
  bwrap?: string
}

export interface SandboxOptions {
  /** false: the process gets a network namespace of its own, with nothing but its own loopback. */
  network: boolean
  /** The vault socket on the host, shown inside at VAULT_SOCKET_INSIDE (a unix socket needs no network). */
  vaultSocket?: string
  /** Host folders shown writable inside, at the places named (under the private /tmp). */
  binds?: ReadonlyArray<{ host: string; inside: string }>
}

export class SandboxUnavailable extends Error {
  constructor(reason: string) {
    super(
      `Stdio MCP servers run only inside a bubblewrap sandbox, and ${reason}. Install bubblewrap (Debian: apt-get ` +
        'install bubblewrap), or set SWITCHBOARD_MCP_SANDBOX=none to run them unsandboxed, as the platform\u2019s own user.',
    )
    this.name = 'SandboxUnavailable'
  }
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path)
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..')
}

/** A system folder, or the symlink to one (/bin -> usr/bin), shown read-only as it is on the host. */
function showReadOnly(path: string): string[] {
  if (!existsSync(path)) return []
  const stat = lstatSync(path)
  return stat.isSymbolicLink() ? ['--symlink', readlinkSync(path), path] : ['--ro-bind', path, path]
}

/** A file of /etc shown by its content: its symlink may point into /run (systemd-resolved), which is not shown. */
function showFile(path: string): string[] {
  return existsSync(path) ? ['--ro-bind', realpathSync(path), path] : []
}

/**
 * Runs stdio MCP servers in a bubblewrap sandbox: their own pid, ipc, uts (and cgroup) namespaces and a fresh /proc,
 * so they cannot see the platform or read its environment; no capabilities; a private /tmp as their home; the
 * system folders, a few files of /etc and the platform's install folder read-only; the data directory (database,
 * key file) and the operator's .env files hidden. Their environment is the one they are started with.
 */
export class Sandbox {
  #checked: string | SandboxUnavailable | undefined

  constructor(private readonly settings: SandboxSettings) {}

  get enabled(): boolean {
    return this.settings.mode === 'bwrap'
  }

  /** The command line that runs `command args` in the sandbox; throws SandboxUnavailable when it cannot. */
  wrap(command: string, args: readonly string[], options: SandboxOptions): { command: string; args: string[] } {
    if (!this.enabled) return { command, args: [...args] }
    const bwrap = this.#bwrap()
    return { command: bwrap, args: [...this.#arguments(options), '--', command, ...args] }
  }

  /** Finds bubblewrap and proves it can make namespaces here (a container may forbid it); the answer is kept. */
  #bwrap(): string {
    if (this.#checked === undefined) {
      const found = this.settings.bwrap ?? Bun.which('bwrap')
      if (!found || !existsSync(found)) this.#checked = new SandboxUnavailable('bubblewrap (bwrap) is not installed')
      else {
        const probe = Bun.spawnSync([found, ...this.#arguments({ network: true }), '--', 'true'], { stderr: 'pipe', env: {} })
        this.#checked = probe.exitCode === 0 ? found : new SandboxUnavailable(`bubblewrap could not start a sandbox here: ${probe.stderr.toString().trim().slice(0, 300)}`)
      }
    }
    if (this.#checked instanceof SandboxUnavailable) throw this.#checked
    return this.#checked
  }

  #arguments({ network, vaultSocket, binds = [] }: SandboxOptions): string[] {
    const dataDir = resolve(this.settings.dataDir)
    const system = [...SYSTEM_DIRS.flatMap(showReadOnly), ...ETC_FILES.flatMap((name) => showFile(join('/etc', name)))]
    const install = realpathSync(INSTALL_DIR)
    const hidden: string[] = []
    // Worked out at every start, so a data directory made since is hidden too; one that does not exist holds nothing.
    if (existsSync(dataDir)) {
      for (const dir of new Set([dataDir, realpathSync(dataDir)])) {
        if (isInside(dir, install) || SYSTEM_DIRS.some((system) => isInside(dir, system))) hidden.push('--tmpfs', dir)
      }
    }
    // Secrets an operator keeps next to the program (Bun reads .env files from the working directory), and the
    // repository's own configuration (a deploy token in a remote's URL).
    for (const name of readdirSync(install)) {
      if (/^\.env/.test(name)) hidden.push('--ro-bind', '/dev/null', join(install, name))
      // A worktree's or submodule's .git is a file naming the repository elsewhere: hidden as an empty file.
      if (name === '.git') hidden.push(...(lstatSync(join(install, name)).isDirectory() ? ['--tmpfs', join(install, name)] : ['--ro-bind', '/dev/null', join(install, name)]))
    }
    // Later mounts cover earlier ones, so the order matters: the private /tmp comes before the install folder,
    // which may itself live under /tmp, and what is hidden comes after what it hides in.
    return [
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(network ? [] : ['--unshare-net']),
      '--hostname', 'mcp-sandbox',
      '--cap-drop', 'ALL',
      ...system,
      '--proc', '/proc',
      // The fresh /proc still holds the kernel's settings: a process that is root without capabilities could write
      // /proc/sys (kernel.core_pattern runs a program as root on the host) or /proc/sysrq-trigger.
      '--ro-bind', '/proc/sys', '/proc/sys',
      '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
      '--ro-bind-try', '/proc/irq', '/proc/irq',
      '--ro-bind-try', '/proc/bus', '/proc/bus',
      '--dev', '/dev',
      '--tmpfs', '/tmp',
      '--ro-bind', install, install,
      ...hidden,
      ...(vaultSocket ? ['--bind', vaultSocket, VAULT_SOCKET_INSIDE] : []),
      ...binds.flatMap(({ host, inside }) => ['--bind', host, inside]),
      '--chdir', '/tmp',
    ]
  }
}
