import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { builtService } from './built-service';

const ROOT = resolve(__dirname, '..', '..');

export interface RunningService {
  process: ChildProcess;
  /** stdout and stderr so far. */
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Runs the current sources as `npm start` runs dist/main.js (built once: built-service.ts), with only the given environment.
 * With `processGroup`, in a session and process group of its own, as `setsid npm start` or a terminal runs it: signal
 * the group with `process.kill(-running.process.pid, signal)`.
 */
export function startService(env: Record<string, string>, options: { processGroup?: boolean } = {}): RunningService {
  const child = spawn(process.execPath, [builtService().main], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup === true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { process: child, output: () => output, exited };
}

export async function waitForHealth(port: number, running: RunningService, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.process.exitCode !== null) throw new Error(`service exited:\n${running.output()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`service did not become healthy:\n${running.output()}`);
}

/** SIGTERM, and the exit code. */
export async function stopService(running: RunningService): Promise<number | null> {
  if (running.process.exitCode === null) running.process.kill('SIGTERM');
  return running.exited;
}

/** A line of the service's log (JSON lines from the first one: src/main.ts). */
export interface LogLine {
  level: number;
  time: string;
  msg: string;
  context?: string;
}

/** The output, line by line, each parsed as JSON: a line that is not JSON fails the test, naming it. */
export function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`Not a JSON line: ${line}`);
      }
    });
}
