import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import { LingeringClose } from './lingering-close';

export interface DrainTimings {
  /**
   * How long connections stay open, each answer closing its own, before the server stops accepting. Longer
   * than the server's keep-alive timeout, so that by then every idle keep-alive connection has been used (and
   * closed after its answer) or timed out as it would have anyway.
   */
  drainMs: number;
  /**
   * After the drain period and before the server stops accepting: requests that `refuse` takes (retryable
   * ones, such as polls) are answered 503 so that a proxy retries them elsewhere and takes this instance out
   * of rotation (nginx counts a 503 as a failed attempt); then no new connection is on its way when the
   * listening socket closes.
   */
  fenceMs?: number;
  /** The whole shutdown's bound: connections still open then are cut. */
  graceMs: number;
}

/** Answers the request itself (a 503) and returns true, or returns false to let it be served. */
export type Refusal = (request: IncomingMessage, response: ServerResponse) => boolean;

/**
 * Stops an HTTP server without a proxy ever seeing a reset on a request it sent.
 *
 * Closing an idle keep-alive connection races the proxy reusing it: a request already on the wire then meets
 * a reset, and a proxy does not retry a POST. So shutdown first keeps serving, answering every request with
 * `Connection: close` (the proxy then opens its next connection elsewhere), for about the server's keep-alive
 * timeout, after which the server would have closed an idle connection anyway. Then it stops accepting,
 * lets requests in flight finish, and cuts what is left when the grace period ends.
 *
 * It never closes a connection it considers idle: Node counts a connection that was just accepted, whose
 * request is on its way, as idle (and `http.Server.close()` closes those), which reset requests a proxy had
 * already sent. Connections end by themselves here: each answer closes its own.
 *
 * Connections that linger after refusing a request's body (LingeringClose) are not waited for: they end when the
 * server stops accepting.
 *
 * With no connection open when shutdown begins (a person stopping `npm start`, nothing behind a proxy), there is
 * nothing to drain and nobody to fence: it stops accepting at once, so that the process, and the database it
 * stops after it, are gone by the time the prompt is back.
 */
export class HttpDrain {
  private draining = false;
  private fencing = false;
  private openConnections = 0;
  private readonly lingering: LingeringClose;

  constructor(
    private readonly server: Server,
    private readonly refuse: Refusal = () => false,
  ) {
    this.lingering = LingeringClose.of(server);
    server.on('connection', (socket) => {
      this.openConnections += 1;
      socket.once('close', () => (this.openConnections -= 1));
    });
  }

  /** Connections accepted since this drain was made and not closed yet. */
  get connections(): number {
    return this.openConnections;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async drain({ drainMs, fenceMs = 0, graceMs }: DrainTimings): Promise<void> {
    const deadline = Date.now() + graceMs;
    this.draining = true;
    // Put in front of the request listeners only now, so that no request pays for it before. A request in
    // flight finishes as it began; its connection is then idle, and is used once more or closed like any other.
    const listeners = this.server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
    this.server.removeAllListeners('request');
    this.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      response.setHeader('Connection', 'close');
      if (this.fencing && this.refuse(request, response)) return;
      for (const listener of listeners) listener.call(this.server, request, response);
    });
    // A connection lingering after a refusal (LingeringClose) has had its answer: nobody waits for it.
    if (this.openConnections - this.lingering.count > 0) {
      await sleep(Math.min(drainMs, graceMs));
      this.fencing = true;
      await sleep(Math.max(0, Math.min(fenceMs, deadline - Date.now())));
    }
    await this.justAfterAccepting();
    this.lingering.closeAll();
    // net.Server's close stops accepting and waits for the connections to end, without http's idle sweep.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(this.server, () => resolve()));
    const cut = sleep(Math.max(0, deadline - Date.now())).then(() => this.server.closeAllConnections());
    await Promise.race([closed, cut]);
  }

  /**
   * Connections the kernel completed but the process has not accepted yet are reset when the listening socket
   * closes, and a proxy has usually written its request on them already. The queue is emptiest right after
   * Node's accept loop: close then, when the next connection arrives (or after a quiet 20 ms).
   */
  private justAfterAccepting(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.server.off('connection', accepted);
        resolve();
      };
      const accepted = () => setImmediate(done);
      const timer = setTimeout(done, 20);
      this.server.once('connection', accepted);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
