import { cleanEnviron } from './clean-environ.ts'

// main.ts imports this module before any other, so the process re-executes itself before the rest of the platform
// is even evaluated: nothing is done twice, and nothing reads the environment before it is clean.
try {
  cleanEnviron(process.env)
} catch (error) {
  console.error((error as Error).message)
  process.exit(1)
}
