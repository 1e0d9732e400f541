import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** A delivery as the receiver took it. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signatures: string[];
  headers: IncomingMessage['headers'];
  /** The raw body, as signed. */
  raw: string;
  body: any;
  /** The path and query it was POSTed to. */
  url: string;
  /** The status the receiver answered. */
  answered: number;
}

/**
 * A webhook receiver on loopback (a real Node HTTP server): it records every POST and answers what `respond` says
 * (200 by default), so tests can fail deliveries on purpose. `verify` checks a delivery the way the Standard Webhooks
 * specification publishes it, written here from the specification rather than taken from the service.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** What to answer a delivery: a status, or a status and a body. */
  respond: (delivery: Omit<ReceivedWebhook, 'answered'>) => number | { status: number; body?: string; delayMs?: number } = () => 200;
  /** Deliveries being answered right now, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  private server: Server | null = null;
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** The receiver's URL on loopback, with a path (and anything else) of the caller's. */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The deliveries that got a 2xx. */
  get accepted(): ReceivedWebhook[] {
    return this.received.filter((delivery) => delivery.answered >= 200 && delivery.answered < 300);
  }

  async waitFor(count: number, timeoutMs = 10_000, accepted = false): Promise<void> {
    const reached = () => (accepted ? this.accepted : this.received).length >= count;
    const deadline = Date.now() + timeoutMs;
    while (!reached()) {
      if (Date.now() > deadline) throw new Error(`The receiver got ${this.received.length} deliveries, not ${count}, within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  clear(): void {
    this.received.length = 0;
    this.maxInFlight = this.inFlight;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.answer(request, response);
    } finally {
      this.inFlight--;
    }
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const delivery = {
      id: String(request.headers['webhook-id'] ?? ''),
      timestamp: String(request.headers['webhook-timestamp'] ?? ''),
      signatures: String(request.headers['webhook-signature'] ?? '')
        .split(' ')
        .filter(Boolean),
      headers: request.headers,
      raw,
      body,
      url: request.url ?? '',
    };
    const answer = this.respond(delivery);
    const { status, body: answerBody, delayMs } = typeof answer === 'number' ? { status: answer, body: undefined, delayMs: 0 } : answer;
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    this.received.push({ ...delivery, answered: status });
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(answerBody ?? (status < 300 ? 'ok' : 'no'));
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/**
 * Standard Webhooks' verification (standardwebhooks.com, "Verifying webhook authenticity"): the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`, the key the base64 after `whsec_`, HMAC-SHA256, each signature `v1,<base64>`;
 * one matching signature is enough. The timestamp must be within 5 minutes of `nowSeconds`.
 */
export function verifyStandardWebhook(secret: string, delivery: ReceivedWebhook, nowSeconds: number): boolean {
  if (!secret.startsWith('whsec_')) return false;
  const timestamp = Number(delivery.timestamp);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > 300) return false;
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${delivery.id}.${delivery.timestamp}.${delivery.raw}`)
    .digest();
  return delivery.signatures.some((signature) => {
    const [version, value] = signature.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
