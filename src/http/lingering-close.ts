import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a refused request's connection goes on reading after the answer, and how many bytes it reads at most. */
export interface LingerLimits {
  ms: number;
  bytes: number;
}

/** nginx's lingering close reads for up to 30 s; a refused body is worth far less here. */
export const LINGER_LIMITS: LingerLimits = { ms: 2_000, bytes: 4 * 1024 * 1024 };

const byServer = new WeakMap<Server, LingeringClose>();

/**
 * Closes the connection of a request answered before its body was read (a 413 on its declared length, an upload
 * refused before its first byte) the way HTTP servers do (nginx's lingering close).
 *
 * Closing a socket whose client is still sending makes the kernel reset the connection, and a reset that reaches
 * the client before it read the answer discards the answer: the client sees `write ECONNRESET` instead of a 413.
 * So the answer says `Connection: close`, the socket is half-closed after it (the client learns that nothing more
 * comes and may stop sending), and the rest of the body is read and discarded until it ends, for at most
 * `limits.ms` after the answer or `limits.bytes`, and only then is the socket closed. A client that sends a few MB
 * and then reads gets the answer; a 100 MiB upload refused early still sees a reset after 4 MB, as it would from
 * nginx. A request whose body has all arrived by its answer keeps its connection as usual.
 *
 * Lingering connections are not waited for by the shutdown drain (`closeAll`).
 */
export class LingeringClose {
  private readonly sockets = new Set<Socket>();
  private closing = false;

  private constructor(private readonly limits: LingerLimits) {}

  /** The server's lingering close (one per server, so that its drain can end what lingers). */
  static of(server: Server, limits: LingerLimits = LINGER_LIMITS): LingeringClose {
    let lingering = byServer.get(server);
    if (!lingering) byServer.set(server, (lingering = new LingeringClose(limits)));
    return lingering;
  }

  /** Connections lingering now: answered, reading the rest of a refused body. */
  get count(): number {
    return this.sockets.size;
  }

  /** Called for every request with a body before it is served: decides at its answer whether it lingers. */
  watch(request: IncomingMessage, response: ServerResponse): void {
    const writeHead = response.writeHead;
    let decided = false;
    response.writeHead = ((...args: unknown[]) => {
      if (!decided && !request.complete && request.socket) this.refused(request, response, request.socket);
      decided = true;
      return (writeHead as (...args: unknown[]) => ServerResponse).apply(response, args);
    }) as ServerResponse['writeHead'];
  }

  /** Ends every lingering connection now, and from now on closes refused requests' connections at once (the drain). */
  closeAll(): void {
    this.closing = true;
    for (const socket of this.sockets) socket.destroy();
  }

  /** An answer written while the body is still on its way: the connection closes after it, lingering. */
  private refused(request: IncomingMessage, response: ServerResponse, socket: Socket): void {
    response.shouldKeepAlive = false;
    // The rest of the body is discarded from now on, counted (Node would otherwise read all of it, uncounted).
    let discarded = 0;
    request.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > this.limits.bytes) socket.destroy();
    });
    request.resume();
    // Node closes a connection after its last answer with destroySoon(): the end of our side, then at once the
    // socket, unread bytes and all (the reset). Here the socket lingers instead.
    const destroySoon = socket.destroySoon;
    socket.destroySoon = () => this.linger(request, socket, () => destroySoon.call(socket));
  }

  /** `close` is Node's own close after an answer, for when the body has all arrived. */
  private linger(request: IncomingMessage, socket: Socket, close: () => void): void {
    if (this.closing || request.complete) return close();
    this.sockets.add(socket);
    // Whatever timeout the request had (an upload's idle timer) is over: only the lingering bounds hold.
    socket.setTimeout(0);
    socket.end();
    const timer = setTimeout(() => socket.destroy(), this.limits.ms);
    request.once('end', close);
    socket.once('close', () => {
      clearTimeout(timer);
      request.off('end', close);
      this.sockets.delete(socket);
    });
  }
}
