import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HttpStatus } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { DomainError } from '../common/domain-error';
import { codeForStatus } from './error-body';
import { LingeringClose } from './lingering-close';

/** A 408 REQUEST_TIMEOUT (the same code in either error shape). */
const requestTimeout = (message: string) => new DomainError(HttpStatus.REQUEST_TIMEOUT, codeForStatus(HttpStatus.REQUEST_TIMEOUT), message);

/** How often Node checks for requests whose headers are late (its default, 30 s, would let them linger). */
const HEADERS_CHECK_INTERVAL_MS = 1_000;

const timedOut = new WeakMap<IncomingMessage, DomainError>();

/** The 408 a request was cut off with, if it was: what a handler still reading its body reports. */
export function timeoutOf(request: IncomingMessage): DomainError | undefined {
  return timedOut.get(request);
}

export interface HttpTimeoutHooks {
  /** Upload requests get an idle timeout (no byte for `uploadIdleMs`) instead of a total one. */
  isUpload(request: IncomingMessage): boolean;
  /** Writes the 408 in the shape of the path the request addressed. */
  answer(request: IncomingMessage, response: ServerResponse, error: DomainError): void;
}

/**
 * The HTTP server's timeouts, for a service behind a proxy that may also be reached directly.
 *
 * Node's own request timeout (300 s for the whole request) is the wrong shape for both kinds of body: a
 * 100 MiB upload on a slow link needs longer than any sensible total, and a JSON body needs far less. So it is
 * off, and each request with a body is watched here instead:
 * - an upload is cut off when no byte arrives for `uploadIdleMs` (a stalled client), however long it takes
 *   in all while bytes keep coming;
 * - any other request must have its whole body within `requestMs` of its first byte.
 * Either answers 408 `REQUEST_TIMEOUT` (if nothing was answered yet) and closes the connection, which fails
 * the handler still reading the body (an upload then stores nothing and gives its URL back).
 *
 * Headers must arrive within `requestMs` too (Node's `headersTimeout`, checked every second). Idle keep-alive
 * connections close after `keepAliveMs`, which must stay above the proxy's idle upstream timeout so that the
 * proxy, not the service, closes an idle connection (otherwise a request it sends as the service closes one is
 * lost). Requests without a body (polls, downloads) pay one check of two headers.
 *
 * A request's timers stop when it is answered. One answered before its body was read (a refusal) closes its
 * connection by lingering (LingeringClose), bounded on its own.
 */
export function applyHttpTimeouts(server: Server, timeouts: AppConfig['timeouts'], hooks: HttpTimeoutHooks): void {
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.requestTimeout = 0;
  server.headersTimeout = timeouts.requestMs;
  // A createServer option that Node reads when the server starts listening (not in @types/node's Server).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(HEADERS_CHECK_INTERVAL_MS, timeouts.requestMs);

  const lingering = LingeringClose.of(server);
  const listeners = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (hasBody(request)) {
      lingering.watch(request, response);
      watchBody(request, response, timeouts, hooks);
    }
    for (const listener of listeners) listener.call(server, request, response);
  });
}

function hasBody(request: IncomingMessage): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

function watchBody(request: IncomingMessage, response: ServerResponse, timeouts: AppConfig['timeouts'], hooks: HttpTimeoutHooks): void {
  const expire = (error: DomainError) => {
    stop();
    // An answer under way (the timers stop once it is written): only the rest of the body is late.
    if (response.headersSent) return void request.socket?.destroy();
    timedOut.set(request, error);
    response.setHeader('Connection', 'close');
    // Once the 408 is written, the request ends early for the handler still reading it (Node, having answered,
    // no longer ties the request to its connection and would leave it waiting for the rest of its body).
    response.once('finish', () => request.destroy());
    hooks.answer(request, response, error);
  };

  let timer: NodeJS.Timeout | undefined;
  let onIdle: (() => void) | undefined;
  const stop = () => {
    clearTimeout(timer);
    if (onIdle) {
      request.off('timeout', onIdle);
      // Only while the request is this connection's: after the answer, Node's keep-alive timeout owns the socket.
      if (!response.writableFinished) request.socket?.setTimeout(0);
    }
  };

  if (hooks.isUpload(request)) {
    const seconds = timeouts.uploadIdleMs / 1000;
    onIdle = () => expire(requestTimeout(`No byte of the upload arrived for ${seconds} s`));
    // The socket's own inactivity timer: every chunk that arrives resets it.
    request.setTimeout(timeouts.uploadIdleMs, onIdle);
  } else {
    const seconds = timeouts.requestMs / 1000;
    timer = setTimeout(() => expire(requestTimeout(`The request body did not arrive within ${seconds} s`)), timeouts.requestMs);
  }
  request.once('end', stop);
  request.once('close', stop);
  response.once('finish', stop);
}
