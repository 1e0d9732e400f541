import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { DatabaseInUseError } from '../database-setup-error';
import { forgetOwner, ownerFile, recordOwner } from './cluster-owner';
import { claimCluster, clusterUse } from './stale-postmaster';

/** A live process whose command line names the cluster, as a PostgreSQL server's does. */
function standInPostmaster(clusterDir: string): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-D', clusterDir, 'bin/postgres'], { stdio: 'ignore' });
}

/** The pid of a process that has exited. */
async function goneProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));

describe('who may run an embedded cluster', () => {
  const logger = { warn: jest.fn(), log: jest.fn() } as unknown as Logger;
  let dataDir: string;
  let clusterDir: string;
  let server: ChildProcess;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flagstore-cluster-owner-'));
    clusterDir = join(dataDir, 'postgres');
    mkdirSync(clusterDir);
    server = standInPostmaster(clusterDir);
    await new Promise((resolve) => server.once('spawn', resolve));
    writeFileSync(join(clusterDir, 'postmaster.pid'), `${server.pid}\n${clusterDir}\n`);
  });
  afterEach(async () => {
    server.kill('SIGKILL');
    await exited(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const record = (owner: object) => writeFileSync(ownerFile(dataDir), JSON.stringify(owner));

  it('refuses a server whose recorded owner is alive, naming both, and leaves it running', async () => {
    record({ pid: process.pid, startTime: null, postmasterPid: server.pid });
    expect(await clusterUse(dataDir, clusterDir)).toEqual({ kind: 'in-use', postmasterPid: server.pid, ownerPid: process.pid });

    const refusal = claimCluster(dataDir, clusterDir, logger);
    await expect(refusal).rejects.toThrow(DatabaseInUseError);
    await expect(refusal).rejects.toMatchObject({
      code: 'DATABASE_IN_USE',
      message: expect.stringContaining(`${clusterDir}, pid ${server.pid}) runs for another process (pid ${process.pid})`),
    });
    expect(server.exitCode).toBeNull();
    expect(() => process.kill(server.pid!, 0)).not.toThrow();
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(true);
  });

  it('refuses a server nobody recorded, or one the record does not speak for', async () => {
    const expected = { kind: 'in-use', postmasterPid: server.pid, ownerPid: null };
    expect(await clusterUse(dataDir, clusterDir)).toEqual(expected);
    record({ pid: await goneProcess(), startTime: null, postmasterPid: server.pid! + 100_000 });
    expect(await clusterUse(dataDir, clusterDir)).toEqual(expected);
    writeFileSync(ownerFile(dataDir), 'not json');
    expect(await clusterUse(dataDir, clusterDir)).toEqual(expected);

    await expect(claimCluster(dataDir, clusterDir, logger)).rejects.toMatchObject({
      code: 'DATABASE_IN_USE',
      message: expect.stringContaining(`kill -INT ${server.pid}`),
    });
    expect(server.exitCode).toBeNull();
  });

  it('stops the server of an owner that is gone, and removes its pid file', async () => {
    const owner = await goneProcess();
    record({ pid: owner, startTime: null, postmasterPid: server.pid });
    expect(await clusterUse(dataDir, clusterDir)).toEqual({ kind: 'orphaned', postmasterPid: server.pid, ownerPid: owner });

    await claimCluster(dataDir, clusterDir, logger);
    await exited(server);
    expect(server.signalCode).toBe('SIGINT');
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false);
  });

  (existsSync('/proc/self/stat') ? it : it.skip)('takes a reused pid for an owner that is gone', async () => {
    // This test's own pid, alive, but with another start time: the recorded owner ended and its pid was reused.
    record({ pid: process.pid, startTime: '1', postmasterPid: server.pid });
    expect(await clusterUse(dataDir, clusterDir)).toMatchObject({ kind: 'orphaned', ownerPid: process.pid });
  });

  it('records this process as the owner, and forgets only its own record', async () => {
    await recordOwner(dataDir, server.pid!);
    expect(JSON.parse(readFileSync(ownerFile(dataDir), 'utf8'))).toEqual({
      pid: process.pid,
      startTime: existsSync('/proc/self/stat') ? expect.stringMatching(/^\d+$/) : null,
      postmasterPid: server.pid,
    });
    expect(await clusterUse(dataDir, clusterDir)).toEqual({ kind: 'in-use', postmasterPid: server.pid, ownerPid: process.pid });
    await forgetOwner(dataDir);
    expect(existsSync(ownerFile(dataDir))).toBe(false);

    record({ pid: await goneProcess(), startTime: null, postmasterPid: server.pid });
    await forgetOwner(dataDir);
    expect(existsSync(ownerFile(dataDir))).toBe(true);
  });

  it('finds a cluster free when its pid file names a process that is gone, and drops the file', async () => {
    server.kill('SIGKILL');
    await exited(server);
    expect(await clusterUse(dataDir, clusterDir)).toEqual({ kind: 'free', stalePidFile: true });
    await claimCluster(dataDir, clusterDir, logger);
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false);
  });
});
