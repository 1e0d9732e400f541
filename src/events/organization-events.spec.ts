import { systemClock } from '../common/clock';
import type { SessionStreams } from '../auth/sessions/session-streams';
import type { InvalidationBus } from '../invalidation/invalidation-bus';
import { OrganizationEvents } from './organization-events';

describe('OrganizationEvents.announce', () => {
  const published: string[] = [];
  const bus = { publish: (_topic: string, message: string) => published.push(message) } as unknown as InvalidationBus;
  const events = new OrganizationEvents(bus, systemClock, {} as SessionStreams);

  beforeEach(() => published.splice(0));

  it('splits the ids into messages of at most 100, which PostgreSQL NOTIFY carries (8,000 bytes)', () => {
    const ids = Array.from({ length: 250 }, (_, index) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`);
    events.announce('org', { type: 'storage', ids, change: 'purged' });
    expect(published).toHaveLength(3);
    const chunks = published.map((message) => JSON.parse(message).event);
    expect(chunks.map((chunk) => chunk.ids.length)).toEqual([100, 100, 50]);
    expect(chunks.flatMap((chunk) => chunk.ids)).toEqual(ids);
    expect(chunks.every((chunk) => chunk.change === 'purged')).toBe(true);
    for (const message of published) expect(Buffer.byteLength(message)).toBeLessThan(8_000);
  });

  it('announces nothing when nothing changed', () => {
    events.announce('org', { type: 'flags', flagIds: [] });
    expect(published).toEqual([]);
  });
});
