/**
 * Stdio sandbox benchmark: what bubblewrap costs an MCP server, in the same run as the baseline (the same server
 * started unsandboxed). A hand-run benchmark, not a test.
 *
 *   start   spawn server-everything, connect the MCP SDK client and list its tools: what the first call of a user
 *           waits for, since each user gets their own process
 *   call    tools/call echo on a started server, in a closed loop: what every later call pays
 *
 * Run:  node_modules/.bin/bun bench/sandbox.ts
 * Environment (defaults in brackets): BENCH_STARTS  starts per mode and round [10]; BENCH_CALLS  calls per mode and
 *   round [2000]; BENCH_ROUNDS  rounds, the modes' order flipped each round; each figure is its median [3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Sandbox } from '../src/mcp/sandbox.ts'
import { ROUNDS, fail } from './harness.ts'

const EVERYTHING = join(import.meta.dir, '..', 'node_modules', '.bin', 'mcp-server-everything')
const STARTS = Number(process.env.BENCH_STARTS ?? 10)
const CALLS = Number(process.env.BENCH_CALLS ?? 2000)
if (!Bun.which('bwrap')) fail('bubblewrap (bwrap) is not installed: apt-get install bubblewrap')

const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-sandbox-'))
const modes = { unsandboxed: new Sandbox({ mode: 'none', dataDir }), bwrap: new Sandbox({ mode: 'bwrap', dataDir }) }
type Mode = keyof typeof modes

async function connect(mode: Mode): Promise<Client> {
  const { command, args } = modes[mode].wrap(EVERYTHING, [], { network: true })
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', HOME: '/tmp' }, stderr: 'ignore' }))
  return client
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function startTimes(mode: Mode): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < STARTS; i++) {
    const began = performance.now()
    const client = await connect(mode)
    await client.listTools()
    times.push(performance.now() - began)
    await client.close()
  }
  return times
}

async function callTimes(mode: Mode): Promise<number[]> {
  const client = await connect(mode)
  const times: number[] = []
  for (let i = 0; i < CALLS; i++) {
    const began = performance.now()
    await client.callTool({ name: 'echo', arguments: { message: 'hello' } })
    times.push(performance.now() - began)
  }
  await client.close()
  return times
}

const results: Record<Mode, { start: number[]; call: number[] }> = { unsandboxed: { start: [], call: [] }, bwrap: { start: [], call: [] } }
for (let round = 0; round < ROUNDS; round++) {
  const order: Mode[] = round % 2 === 0 ? ['unsandboxed', 'bwrap'] : ['bwrap', 'unsandboxed']
  for (const mode of order) {
    results[mode].start.push(median(await startTimes(mode)))
    results[mode].call.push(median(await callTimes(mode)))
  }
}
rmSync(dataDir, { recursive: true, force: true })

const start = { unsandboxed: median(results.unsandboxed.start), bwrap: median(results.bwrap.start) }
const call = { unsandboxed: median(results.unsandboxed.call), bwrap: median(results.bwrap.call) }
console.log(`server-everything, ${ROUNDS} rounds, medians (${STARTS} starts and ${CALLS} calls per mode and round)`)
console.log('| mode | start to tools/list (ms) | tools/call echo p50 (ms) |')
console.log('|---|---|---|')
for (const mode of ['unsandboxed', 'bwrap'] as const) console.log(`| ${mode} | ${start[mode].toFixed(1)} | ${call[mode].toFixed(3)} |`)
console.log(`ratio bwrap / unsandboxed: start ${(start.bwrap / start.unsandboxed).toFixed(2)}x, call ${(call.bwrap / call.unsandboxed).toFixed(2)}x`)
