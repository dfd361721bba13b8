import { readFileSync } from 'node:fs'
import { ConfigError } from '../config.ts'

/** The secrets that may instead be given as NAME_FILE, a file holding the value (Docker secrets, systemd credentials). */
export const SECRET_FILE_VARIABLES = ['INTERNAL_API_SECRET', 'SWITCHBOARD_MASTER_KEY', 'SWITCHBOARD_ADMIN_PASSWORD', 'DATABASE_URL'] as const

/**
 * Replaces each NAME_FILE in env by NAME with the file's content, before loadConfig reads env. The value then lives
 * only in memory, never in the environment block. Throws one ConfigError naming every variable at fault; a message
 * names the path, never the content.
 */
export function readSecretFiles(env: Record<string, string | undefined>): void {
  const problems: string[] = []
  for (const name of SECRET_FILE_VARIABLES) {
    const fileVariable = `${name}_FILE`
    const path = env[fileVariable]
    delete env[fileVariable]
    // An empty variable means "not set", as loadConfig reads it.
    if (!path) continue
    if (env[name]) {
      problems.push(`${name} and ${fileVariable} are both set; set only one of them`)
      continue
    }
    let content: string
    try {
      content = readFileSync(path, 'utf8')
    } catch (error) {
      problems.push(`${fileVariable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
      continue
    }
    // Files written by `echo` or an editor end in a newline that is not part of the secret.
    const value = content.replace(/[\r\n]+$/, '')
    if (value === '') problems.push(`${fileVariable}: ${path} is empty`)
    else env[name] = value
  }
  if (problems.length > 0) throw new ConfigError(problems)
}
