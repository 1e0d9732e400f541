/** One block of a server-sent event stream, as written: its fields, or a comment. */
export interface SseBlock {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
  comment?: string;
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** The body, for an answer that is not a stream (an error). */
  body: () => Promise<string>;
  /** Every block received so far. */
  blocks: SseBlock[];
  /** Waits for a block that satisfies `match` (among those received or to come). */
  next(match: (block: SseBlock) => boolean, timeoutMs?: number): Promise<SseBlock>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** A test's own reader of a text/event-stream answer (WHATWG format: fields, comments, blank-line separated). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const blocks: SseBlock[] = [];
  const waiters: Array<{ match: (block: SseBlock) => boolean; resolve: (block: SseBlock) => void }> = [];
  const isStream = response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));

  const deliver = (block: SseBlock) => {
    blocks.push(block);
    for (const waiter of [...waiters]) {
      if (waiter.match(block)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(block);
      }
    }
  };

  if (isStream) {
    void (async () => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.search(/\r?\n\r?\n/)) !== -1) {
            const raw = buffer.slice(0, end);
            buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
            deliver(parseBlock(raw));
          }
        }
      } catch {
        // aborted by close()
      } finally {
        resolveEnded();
      }
    })();
  } else {
    resolveEnded();
  }

  return {
    status: response.status,
    headers: response.headers,
    body: () => response.text(),
    blocks,
    ended,
    next(match, timeoutMs = 5_000) {
      const found = blocks.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(blocks)}`)), timeoutMs);
        waiters.push({
          match,
          resolve: (block) => {
            clearTimeout(timer);
            resolve(block);
          },
        });
      });
    },
    close: () => controller.abort(),
  };
}

function parseBlock(raw: string): SseBlock {
  const block: SseBlock = {};
  for (const line of raw.split(/\r?\n/)) {
    if (line.startsWith(':')) {
      block.comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') block.id = value;
    else if (field === 'event') block.event = value;
    else if (field === 'data') block.data = block.data === undefined ? value : `${block.data}\n${value}`;
    else if (field === 'retry') block.retry = Number(value);
  }
  return block;
}
