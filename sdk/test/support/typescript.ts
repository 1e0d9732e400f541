import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repositoryRoot = resolve(__dirname, '../../..');
export const sdkRoot = join(repositoryRoot, 'sdk');

/** Runs the root's tsc from the repository root; resolves with its output, or rejects with it. */
export async function typescript(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(repositoryRoot, 'node_modules', 'typescript-7', 'bin', 'tsc'), ...args], {
      cwd: repositoryRoot,
    });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

/** Builds the SDK as its package.json says (tsc -p tsconfig.json), into `outDir` instead of sdk/dist. */
export function buildSdk(outDir: string): Promise<string> {
  return typescript('-p', 'sdk/tsconfig.json', '--outDir', outDir);
}
