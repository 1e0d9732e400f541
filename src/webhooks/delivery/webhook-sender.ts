import { ClientRequest, IncomingMessage, request as httpRequest, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, LookupFunction, Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { forbiddenRange } from './address-policy';
import { describeRange, hostAddress, Lookup, redactUrl, systemLookup } from './webhook-url';

// decisions.md, "Webhooks (turn 5)": 256 KB bodies at most, 10 s per attempt, the first 1 KB of the answer listed.
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
export const RESPONSE_EXCERPT_BYTES = 1024;
export const WEBHOOK_USER_AGENT = 'Flagstore-Webhooks/1';

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
  lookup?: Lookup;
}

/** The receiver's answer, whatever its status: a 3xx is an answer too (redirects are never followed). */
export interface WebhookResponse {
  status: number;
  durationMs: number;
  /** The first RESPONSE_EXCERPT_BYTES of the body, UTF-8 decoded without a broken last character. */
  excerpt: string;
}

/** Why an attempt got no answer. */
export type WebhookSendFailure =
  | 'invalid-request' // not an http(s) URL, or a header Node refuses to send
  | 'body-too-large'
  | 'refused-address' // the address policy: nothing was sent
  | 'dns'
  | 'connect'
  | 'tls'
  | 'no-answer' // connected, then the connection ended or the answer was not HTTP
  | 'timeout'
  | 'aborted';

/**
 * An attempt that got no answer at all. Its message names the URL only as redactUrl gives it and never quotes the
 * body or headers (they carry the signature), so it can be logged and shown in the console as it is.
 */
export class WebhookSendError extends Error {
  override readonly name = 'WebhookSendError';
  /** True when the address policy refused the connection: the receiver was never reached. */
  readonly refusedAddress: boolean;

  constructor(
    message: string,
    readonly durationMs: number,
    readonly reason: WebhookSendFailure,
  ) {
    super(message);
    this.refusedAddress = reason === 'refused-address';
  }
}

/** Thrown inside the connection's lookup and socket guard, turned into a WebhookSendError by postWebhook. */
class AddressRefused extends Error {}
class HostUnresolved extends Error {}

/**
 * One POST of a webhook delivery. The address policy is applied to the addresses the connection is made to (inside
 * the socket's own DNS lookup, and again on the connected socket), not to an earlier resolution that DNS rebinding
 * could change. Resolves with the answer's status, whatever it is; rejects with WebhookSendError when there is no
 * answer within `timeoutMs` (resolving, connecting, the answer's headers and the excerpt together).
 */
export async function postWebhook(post: WebhookPost): Promise<WebhookResponse> {
  const started = performance.now();
  const target = redactUrl(post.url);
  const failure = (reason: WebhookSendFailure, detail: string) =>
    new WebhookSendError(`POST ${target} ${reason === 'refused-address' ? 'refused' : 'failed'}: ${detail}`, elapsedSince(started), reason);

  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    throw failure('invalid-request', 'not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw failure('invalid-request', 'only http and https URLs are called');
  const bodyBytes = Buffer.byteLength(post.body);
  if (bodyBytes > MAX_WEBHOOK_BODY_BYTES) {
    throw failure('body-too-large', `the body is ${bodyBytes} bytes, over the limit of ${MAX_WEBHOOK_BODY_BYTES}`);
  }
  if (post.signal?.aborted) throw failure('aborted', 'aborted before sending');
  // Node connects to an IP-literal host without calling `lookup`: the literal is judged here instead.
  const host = hostAddress(url);
  if (isIP(host) && !post.allowPrivate) {
    const range = forbiddenRange(host);
    if (range) throw failure('refused-address', `${host} is ${describeRange(range)}`);
  }

  return new Promise<WebhookResponse>((resolve, reject) => {
    let request: ClientRequest | undefined;
    let settled = false;
    let phase: 'connect' | 'tls' | 'no-answer' = 'connect';
    let answer: { response: IncomingMessage; chunks: Buffer[]; bytes: number } | null = null;

    const settle = (error: WebhookSendError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      post.signal?.removeEventListener('abort', onAbort);
      request?.destroy();
      if (error && !answer) return reject(error);
      // Once the status line is in, the receiver has answered: a body cut short by the timeout or a reset is still
      // that answer, with the excerpt read so far.
      const { response, chunks } = answer!;
      const excerpt = new StringDecoder('utf8').write(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES));
      resolve({ status: response.statusCode ?? 0, durationMs: elapsedSince(started), excerpt });
    };
    const onAbort = () => settle(failure('aborted', 'aborted'));
    const timer = setTimeout(() => settle(failure('timeout', `no answer within ${post.timeoutMs} ms`)), post.timeoutMs);
    post.signal?.addEventListener('abort', onAbort, { once: true });

    const options: RequestOptions = {
      method: 'POST',
      hostname: host,
      port: url.port === '' ? undefined : Number(url.port),
      path: url.pathname + url.search,
      // User info is the receiver's Basic credentials, as curl sends it.
      auth: url.username || url.password ? `${percentDecoded(url.username)}:${percentDecoded(url.password)}` : undefined,
      headers: {
        'content-type': 'application/json',
        ...post.headers,
        'user-agent': WEBHOOK_USER_AGENT,
        'content-length': String(bodyBytes),
      },
      // A connection of its own each time: a pooled socket would skip the lookup, and with it the address policy.
      agent: false,
      lookup: guardedLookup(post.lookup ?? systemLookup, post.allowPrivate),
    };

    try {
      request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options);
    } catch (error) {
      return settle(failure('invalid-request', (error as Error).message));
    }
    request.on('socket', (socket: Socket) => {
      // Prepended so that it runs before the request's queued bytes are written on 'connect'.
      socket.prependOnceListener('connect', () => {
        phase = url.protocol === 'https:' ? 'tls' : 'no-answer';
        const remote = socket.remoteAddress ?? '';
        const range = post.allowPrivate ? null : isIP(remote) ? forbiddenRange(remote) : 'reserved';
        if (range) request!.destroy(new AddressRefused(`connected to ${remote}, ${describeRange(range)}`));
      });
      socket.once('secureConnect', () => (phase = 'no-answer'));
    });
    request.on('error', (error) => {
      if (error instanceof AddressRefused) return settle(failure('refused-address', error.message));
      if (error instanceof HostUnresolved) return settle(failure('dns', error.message));
      settle(failure(phase, describeError(error)));
    });
    request.on('response', (response) => {
      answer = { response, chunks: [], bytes: 0 };
      const read = answer;
      response.on('data', (chunk: Buffer) => {
        read.chunks.push(chunk);
        read.bytes += chunk.length;
        // Enough for the excerpt: the rest of a large answer is never downloaded.
        if (read.bytes >= RESPONSE_EXCERPT_BYTES) settle(null);
      });
      response.on('end', () => settle(null));
      response.on('error', () => settle(null));
      response.on('close', () => settle(null));
    });
    request.end(post.body);
  });
}

/**
 * The connection's DNS lookup: resolves with `lookup` and refuses every answer when any address is forbidden
 * (unless the operator allows private addresses), so the socket can only connect to an address that was judged.
 */
function guardedLookup(lookup: Lookup, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    lookup(hostname)
      .then(
        (found) => {
          const addresses = found.filter(({ family }) => wanted === 0 || family === wanted);
          if (addresses.length === 0) throw new HostUnresolved(`${hostname} does not resolve`);
          if (!allowPrivate) {
            for (const { address } of addresses) {
              const range = isIP(address) ? forbiddenRange(address) : 'reserved';
              if (range) throw new AddressRefused(`${hostname} resolves to ${describeRange(range)} (${address})`);
            }
          }
          return addresses;
        },
        (error: NodeJS.ErrnoException) => {
          throw new HostUnresolved(`${hostname} does not resolve (${error.code ?? 'lookup failed'})`);
        },
      )
      .then(
        (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
        (error: Error) => callback(error, ''),
      );
  };
}

/** A socket or TLS error's own words: Node's carry addresses and codes, never the request's path or headers. */
function describeError(error: NodeJS.ErrnoException): string {
  return error.code && !error.message.includes(error.code) ? `${error.message} (${error.code})` : error.message;
}

/** User info as typed: the URL parser leaves a stray `%` as it is, which decodeURIComponent would throw on. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}
