import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface DrainTimings {
  /** How long connections stay open, each answer closing its own, before the server stops accepting. */
  drainMs: number;
  /** The whole shutdown's bound: connections still open then are cut. */
  graceMs: number;
}

/**
 * Stops an HTTP server without a proxy ever seeing a reset on a request it sent.
 *
 * Closing an idle keep-alive connection races the proxy reusing it: a request already on the wire then meets
 * a reset, and a proxy does not retry a POST. So shutdown first keeps serving, answering every request with
 * `Connection: close` (the proxy then opens its next connection elsewhere), for about the server's keep-alive
 * timeout, after which the server would have closed an idle connection anyway. Then it stops accepting,
 * lets requests in flight finish, and cuts what is left when the grace period ends.
 */
export class HttpDrain {
  private draining = false;

  constructor(private readonly server: Server) {}

  get isDraining(): boolean {
    return this.draining;
  }

  async drain({ drainMs, graceMs }: DrainTimings): Promise<void> {
    const deadline = Date.now() + graceMs;
    this.draining = true;
    // Installed only now, so that no request pays for it before. A request in flight finishes as it began;
    // its connection is then idle, and is used once more or closed like any other.
    this.server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      response.setHeader('Connection', 'close');
    });
    await sleep(Math.min(drainMs, graceMs));
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // A connection whose answer went out with keep-alive becomes idle later; close it as soon as it is.
    const sweeper = setInterval(() => this.server.closeIdleConnections(), 50);
    const cut = sleep(Math.max(0, deadline - Date.now())).then(() => this.server.closeAllConnections());
    await Promise.race([closed, cut]);
    clearInterval(sweeper);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
