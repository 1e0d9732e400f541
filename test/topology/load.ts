import { Agent } from 'node:http';
import { call, keepAliveAgent, Reply, sleep } from './topology';

/** One request of a load loop, kept for the assertions and for the report when one fails. */
export interface Outcome {
  kind: 'poll' | 'write';
  method: string;
  path: string;
  startedAt: number;
  endedAt: number;
  status: number;
  /** The error code of an API error body (`error`), or the network error. */
  code?: string;
  detail?: string;
  /** The port of the instance that answered (nginx's X-Upstream-Addr: the last one it tried), if one did. */
  upstreamPort?: number;
  /** A poll's key: its index in pollKeys. */
  key?: number;
}

export interface LoadOptions {
  baseUrl: string;
  /** Keys the polls rotate over: each stays far below the per-key limit (see pollsPerSecond). */
  pollKeys: string[];
  pollsPerSecond: number;
  pollWorkers: number;
  /** A key with FLAGS_WRITE; writes go to its organization. */
  writeKey: string;
  writeIntervalMs: number;
  /** Write loops side by side (each one write at a time). */
  writers?: number;
  /** Flag keys start with this, so each phase creates its own. */
  flagPrefix: string;
  /** At most this many flags are created (the organization's allowance is 50); the other writes are PATCHes. */
  maxCreates: number;
  /** Hard bounds: the loops stop by themselves past them even if stop() is never called. */
  maxDurationMs: number;
  maxPolls: number;
  maxWrites: number;
}

/**
 * Polls with If-None-Match at a fixed rate, rotating over many keys, and a steady trickle of writes (a POST
 * every fifth write while the creation budget lasts, PATCHes of the flags created otherwise), all through one
 * base URL (nginx). Nothing is judged here: every outcome is kept for the test to judge.
 */
export class Load {
  readonly outcomes: Outcome[] = [];
  private readonly etags = new Map<string, string>();
  private readonly agent: Agent = keepAliveAgent();
  private readonly created: string[] = [];
  private stopped = false;
  private running?: Promise<void>;
  private started = 0;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.started = Date.now();
    const workers: Promise<void>[] = [];
    let next = 0;
    const interval = 1000 / this.options.pollsPerSecond;
    for (let worker = 0; worker < this.options.pollWorkers; worker += 1) {
      workers.push(
        (async () => {
          while (!this.done()) {
            const index = next++;
            if (index >= this.options.maxPolls) return;
            const due = this.started + index * interval;
            const wait = due - Date.now();
            if (wait > 0) await sleep(wait);
            if (this.done()) return;
            await this.poll(index % this.options.pollKeys.length);
          }
        })(),
      );
    }
    for (let writer = 0; writer < (this.options.writers ?? 1); writer += 1) workers.push(this.writeLoop(writer));
    this.running = Promise.all(workers).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    this.agent.destroy();
  }

  get polls(): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.kind === 'poll');
  }

  get writes(): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.kind === 'write');
  }

  /** How many outcomes had each status, e.g. {"200": 12, "304": 3000}. */
  static statuses(outcomes: Outcome[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const outcome of outcomes) counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
    return counts;
  }

  private done(): boolean {
    return this.stopped || Date.now() - this.started > this.options.maxDurationMs;
  }

  private async poll(keyIndex: number): Promise<void> {
    const key = this.options.pollKeys[keyIndex];
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    const etag = this.etags.get(key);
    if (etag) headers['If-None-Match'] = etag;
    const startedAt = Date.now();
    const reply = await call(this.options.baseUrl, '/v1/flags/config', { headers, agent: this.agent, timeoutMs: 15_000 });
    if (reply.status === 200 && typeof reply.headers.etag === 'string') this.etags.set(key, reply.headers.etag);
    this.record('poll', 'GET', '/v1/flags/config', startedAt, reply, keyIndex);
  }

  private async writeLoop(writer: number): Promise<void> {
    let writes = 0;
    while (!this.done() && writes < this.options.maxWrites) {
      const startedAt = Date.now();
      const headers = { Authorization: `Bearer ${this.options.writeKey}` };
      if (this.created.length === 0 || (writes % 5 === 0 && this.created.length < this.options.maxCreates)) {
        const key = `${this.options.flagPrefix}-${writer}-${writes}`;
        const reply = await call(this.options.baseUrl, '/v1/flags', {
          method: 'POST',
          headers,
          body: { key, name: `Load ${key}`, type: 'boolean', value: true },
          agent: this.agent,
        });
        if (reply.status === 201) this.created.push(reply.json<{ id: string }>().id);
        this.record('write', 'POST', '/v1/flags', startedAt, reply);
      } else {
        const id = this.created[writes % this.created.length];
        const reply = await call(this.options.baseUrl, `/v1/flags/${id}`, {
          method: 'PATCH',
          headers,
          body: { type: 'boolean', value: writes % 2 === 0 },
          agent: this.agent,
        });
        this.record('write', 'PATCH', `/v1/flags/${id}`, startedAt, reply);
      }
      writes += 1;
      const wait = startedAt + this.options.writeIntervalMs - Date.now();
      if (wait > 0) await sleep(wait);
    }
  }

  private record(kind: Outcome['kind'], method: string, path: string, startedAt: number, reply: Reply, key?: number): void {
    let code = reply.error;
    let detail: string | undefined;
    if (reply.status >= 400) {
      const text = reply.body.toString('utf8');
      detail = text.slice(0, 300);
      try {
        const body = JSON.parse(text) as { error?: unknown };
        if (typeof body.error === 'string') code = body.error;
        else if (body.error && typeof body.error === 'object') code = String((body.error as { code?: unknown }).code);
      } catch {
        // not JSON (nginx's own error page)
      }
    }
    const upstream = reply.headers['x-upstream-addr'];
    const port =
      typeof upstream === 'string'
        ? /:(\d+)$/.exec(
            upstream
              .split(/, | : /)
              .pop()!
              .trim(),
          )?.[1]
        : undefined;
    this.outcomes.push({
      kind,
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: reply.status,
      code,
      detail,
      upstreamPort: port === undefined ? undefined : Number(port),
      key,
    });
  }
}

/** A poll or write that was answered as asked: 2xx, or 304 for a poll. */
export function succeeded(outcome: Outcome): boolean {
  return (outcome.status >= 200 && outcome.status < 300) || outcome.status === 304;
}

/** A poll or write that failed: a network error, or any status but 2xx, 304 and 429. */
export function failed(outcome: Outcome): boolean {
  return !((outcome.status >= 200 && outcome.status < 300) || outcome.status === 304 || outcome.status === 429);
}

export function describeOutcomes(outcomes: Outcome[], limit = 20): string {
  return outcomes
    .slice(0, limit)
    .map(
      (outcome) =>
        `${new Date(outcome.startedAt).toISOString()} +${outcome.endedAt - outcome.startedAt}ms ${outcome.method} ${outcome.path} -> ${outcome.status}` +
        `${outcome.code ? ` ${outcome.code}` : ''}${outcome.detail ? ` ${outcome.detail}` : ''}`,
    )
    .join('\n');
}
