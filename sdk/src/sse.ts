/** One dispatched server-sent event. */
export interface SseEvent {
  /** `event:`, or `message` when the event named none. */
  type: string;
  /** Its `data:` lines joined with a line feed. */
  data: string;
  /** The stream's last event id as of this event (`id:` persists until another `id:` changes it). */
  lastEventId: string;
}

export interface SseHandlers {
  event(event: SseEvent): void;
  /** A `retry:` field: how long the server wants a client to wait before reconnecting, in ms. */
  retry?(delayMs: number): void;
}

/**
 * The text/event-stream parser of the HTML standard (9.2.6), fed chunk by chunk: lines end with CRLF, LF or CR
 * (a CRLF may be split across chunks), `:` starts a comment, a field's value loses one leading space, an empty
 * line dispatches, an event without data is not dispatched, and what is left when the stream ends is dropped.
 */
export class SseParser {
  private readonly decoder = new TextDecoder('utf-8'); // drops a leading BOM, holds a character split across chunks
  private pending = '';
  /** The last chunk ended with CR: a LF opening the next one belongs to that line break. */
  private skipLineFeed = false;
  private dataLines: string[] = [];
  private eventType = '';
  private lastEventId = '';

  constructor(private readonly handlers: SseHandlers) {}

  push(chunk: Uint8Array | string): void {
    const text = this.pending + (typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
    let position = 0;
    if (this.skipLineFeed && text.length > 0) {
      if (text[0] === '\n') position = 1;
      this.skipLineFeed = false;
    }
    for (;;) {
      const end = lineEnd(text, position);
      if (end === -1) break;
      const line = text.slice(position, end);
      if (text[end] === '\r' && end + 1 === text.length) {
        this.skipLineFeed = true;
        position = end + 1;
      } else {
        position = text[end] === '\r' && text[end + 1] === '\n' ? end + 2 : end + 1;
      }
      this.line(line);
    }
    this.pending = text.slice(position);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.handlers.retry?.(Number(value));
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  private dispatch(): void {
    const dataLines = this.dataLines;
    const type = this.eventType || 'message';
    this.dataLines = [];
    this.eventType = '';
    if (dataLines.length === 0) return;
    this.handlers.event({ type, data: dataLines.join('\n'), lastEventId: this.lastEventId });
  }
}

function lineEnd(text: string, from: number): number {
  const cr = text.indexOf('\r', from);
  const lf = text.indexOf('\n', from);
  if (cr === -1) return lf;
  if (lf === -1) return cr;
  return Math.min(cr, lf);
}
