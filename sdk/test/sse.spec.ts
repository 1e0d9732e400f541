import { SseEvent, SseParser } from '../src/sse';

/** Feeds `chunks` to a parser and returns what it dispatched, and the retry hints it read. */
function parse(...chunks: Array<string | Uint8Array>): { events: SseEvent[]; retries: number[] } {
  const events: SseEvent[] = [];
  const retries: number[] = [];
  const parser = new SseParser({ event: (event) => events.push(event), retry: (delayMs) => retries.push(delayMs) });
  for (const chunk of chunks) parser.push(chunk);
  return { events, retries };
}

const contractEvent = 'id: abc123\nevent: message\ndata: {"type":"refetchEvaluation","etag":"abc123","lastModified":1900000000}\n\n';

describe('SseParser', () => {
  it("reads the change stream's event", () => {
    expect(parse(contractEvent).events).toEqual([
      { type: 'message', data: '{"type":"refetchEvaluation","etag":"abc123","lastModified":1900000000}', lastEventId: 'abc123' },
    ]);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('ends lines with %s', (_name, newline) => {
    const text = ['id: 1', 'data: first', 'data: second', '', ''].join(newline);
    expect(parse(text).events).toEqual([{ type: 'message', data: 'first\nsecond', lastEventId: '1' }]);
  });

  it('reads an event split anywhere across chunks, a CRLF split between two included', () => {
    const text = 'id: 7\r\nevent: message\r\ndata: {"a":1}\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse(text.slice(0, cut), text.slice(cut)).events).toEqual([{ type: 'message', data: '{"a":1}', lastEventId: '7' }]);
    }
  });

  it('decodes UTF-8 split across byte chunks, and drops a leading BOM', () => {
    const bytes = new TextEncoder().encode('\uFEFFdata: héllo ✓\n\n');
    const events = parse(...Array.from(bytes, (byte) => Uint8Array.of(byte))).events;
    expect(events).toEqual([{ type: 'message', data: 'héllo ✓', lastEventId: '' }]);
  });

  it('skips comments (the keep-alive), and ignores unknown fields', () => {
    expect(parse(': keep-alive\n\n', 'foo: bar\ndata: x\n: inside\n\n').events).toEqual([{ type: 'message', data: 'x', lastEventId: '' }]);
  });

  it('dispatches nothing for a block without data, but keeps its id for later events', () => {
    const { events } = parse('id: 5\nevent: message\n\n', 'data: later\n\n');
    expect(events).toEqual([{ type: 'message', data: 'later', lastEventId: '5' }]);
  });

  it('reads retry: hints of digits only', () => {
    expect(parse('retry: 1500\n\n', 'retry: soon\n\n', 'retry: 1.5\n\n').retries).toEqual([1500]);
  });

  it('removes one space after the colon, no more, and reads a field without colon as empty', () => {
    expect(parse('data:  two spaces\ndata:none\ndata\n\n').events[0].data).toBe(' two spaces\nnone\n');
  });

  it('names the event by event:, message when it names none', () => {
    expect(parse('event: other\ndata: 1\n\ndata: 2\n\n').events.map((event) => event.type)).toEqual(['other', 'message']);
  });

  it('ignores an id holding NUL', () => {
    expect(parse('id: good\ndata: 1\n\nid: b\0d\ndata: 2\n\n').events.map((event) => event.lastEventId)).toEqual(['good', 'good']);
  });

  it('does not dispatch an event the stream cut before its blank line', () => {
    expect(parse('data: complete\n\ndata: cut off\n').events.map((event) => event.data)).toEqual(['complete']);
  });
});
