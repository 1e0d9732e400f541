import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';

/** The lowest port of the free ones looked at: above the well-known and most registered services' ports. */
const LOWEST = 10_000;
const TRIES = 20;

/**
 * A TCP port that was free on the loopback interface a moment ago, for a server that is to listen on it soon.
 *
 * It is taken at random below the system's ephemeral range, never from it: an ephemeral port is what every outgoing
 * connection on the machine is given (to PostgreSQL, to Redis, between tests), so one the OS handed out a moment ago
 * may be some client's own before the server listens, and that server then fails with EADDRINUSE. Below the range only
 * another listener can take it. Where no such room exists, the OS picks.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const highest = ephemeralRangeStart() - 1;
  if (highest - LOWEST >= 1_000) {
    for (let i = 0; i < TRIES; i += 1) {
      const port = randomInt(LOWEST, highest + 1);
      if ((await listenOnce(host, port)) !== undefined) return port;
    }
  }
  const picked = await listenOnce(host, 0);
  if (picked === undefined) throw new Error(`no free port on ${host}`);
  return picked;
}

/** Listens on `port` (0: one the OS picks) and closes again: the port it had, or undefined when it was taken. */
function listenOnce(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolvePort(undefined) : reject(error),
    );
    probe.listen(port, host, () => {
      const address = probe.address();
      probe.close(() => resolvePort(typeof address === 'object' && address ? address.port : undefined));
    });
  });
}

/** Linux's ip_local_port_range (32768 by default); elsewhere IANA's dynamic range, which macOS and Windows use. */
function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(start) && start > 0) return start;
  } catch {
    // not Linux
  }
  return 49_152;
}
