import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/common/free-port';
import { api, createFlag } from '../../test/factories/flags.factory';
import { eventually } from '../../test/support/eventually';
import { useTestApp } from '../../test/support/test-suite';
import { buildSdk, sdkRoot } from './support/typescript';

/** The README's example, as a reader would copy it. */
function readmeExample(): string {
  const readme = readFileSync(join(sdkRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A game server that relays flags to its players'));
  const example = /```js\n([\s\S]*?)```/.exec(section);
  if (!example) throw new Error('sdk/README.md has no example');
  return example[1];
}

/** A player's connection: the JSON lines the game server sends it. */
function player(port: number): Promise<{ socket: Socket; next(): Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const lines: string[] = [];
    const waiting: Array<(line: string) => void> = [];
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const waiter = waiting.shift();
        if (waiter) waiter(line);
        else lines.push(line);
      }
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        socket,
        next: () =>
          new Promise<unknown>((found) => {
            const line = lines.shift();
            if (line !== undefined) found(JSON.parse(line));
            else waiting.push((later) => found(JSON.parse(later)));
          }),
      }),
    );
  });
}

describe('the README example', () => {
  const { t, org } = useTestApp({ subscribed: true, leanConfigPoll: true });
  let directory: string;
  let server: ChildProcess | undefined;
  let output = '';
  const players: Socket[] = [];

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'flagstore-sdk-example-'));
    // The package as npm would install it: its package.json and its build.
    const installed = join(directory, 'node_modules', '@flagstore', 'sdk');
    mkdirSync(installed, { recursive: true });
    copyFileSync(join(sdkRoot, 'package.json'), join(installed, 'package.json'));
    await buildSdk(join(installed, 'dist'));
    writeFileSync(join(directory, 'server.js'), readmeExample());
  }, 60_000);
  afterEach(() => {
    players.splice(0).forEach((socket) => socket.destroy());
    server?.kill();
    server = undefined;
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('relays only shared flags to players, pushes a change to them at once, and keeps a cache file', async () => {
    await createFlag(t, org.key, { key: 'max-players', type: 'number', value: 1 });
    const motd = await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'Welcome' });
    await createFlag(t, org.key, { key: 'anti-cheat-threshold', type: 'number', value: 0.9, runtime: 'server' });
    const port = await freePort();
    server = spawn(process.execPath, ['server.js'], {
      cwd: directory,
      env: { ...process.env, FLAGSTORE_URL: t.config.urls.baseUrl, FLAGSTORE_KEY: org.key, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (chunk) => (output += chunk));
    server.stderr!.on('data', (chunk) => (output += chunk));

    let first: Awaited<ReturnType<typeof player>> | undefined;
    await eventually(async () => (first = await player(port).catch(() => undefined)) !== undefined, {
      what: 'the example listening',
      timeoutMs: 10_000,
    });
    players.push(first!.socket);
    expect(await first!.next()).toEqual({ type: 'flags', flags: { 'max-players': 1, motd: 'Welcome' } });

    const second = await player(port);
    players.push(second.socket);
    expect(await second.next()).toEqual({ type: 'full' }); // max-players, read with getNumber

    await api(t, org.key).patch(`/flags/${motd.id}`).send({ type: 'string', value: 'Double XP tonight' }).expect(200);
    expect(await first!.next()).toEqual({ type: 'flags', flags: { 'max-players': 1, motd: 'Double XP tonight' } });

    await eventually(() => existsSync(join(directory, 'flags.json')), { what: 'the cache file written' });
    expect(output).toBe(''); // no error, no warning
  }, 30_000);
});
