import { eventFrame } from './sse-frames';

describe('SSE frames of the config stream', () => {
  it('frames a payload as one refetchEvaluation event whose id is the ETag, lastModified in whole seconds', () => {
    const frame = eventFrame({ etag: 'abc123', builtAt: Date.parse('2026-12-04T18:00:00.999Z') });
    expect(frame.toString()).toBe('id: abc123\nevent: message\ndata: {"type":"refetchEvaluation","etag":"abc123","lastModified":1796407200}\n\n');
  });
});
