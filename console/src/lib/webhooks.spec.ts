import { parseFlagKeys, redeliverable, shortUrl, type WebhookDelivery } from './webhooks';

const line = (eventId: string, status: WebhookDelivery['status'], attempt = 1): WebhookDelivery => ({
  eventId,
  type: 'flag.changed',
  attempt,
  status,
  responseStatus: null,
  durationMs: null,
  responseExcerpt: null,
  error: null,
  at: '2026-11-29T12:00:00Z',
});

describe("the console's webhooks", () => {
  it('shortens a URL to its host and the start of its path, never its user info, query or a chat token at its end', () => {
    expect(shortUrl('https://hooks.example.com/flagstore')).toBe('hooks.example.com/flagstore');
    expect(shortUrl('https://hooks.example.com/')).toBe('hooks.example.com');
    expect(shortUrl('http://127.0.0.1:4000/hook')).toBe('127.0.0.1:4000/hook');
    const slack = shortUrl('https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX');
    expect(slack).toBe('hooks.slack.com/services/T00000000/B000…');
    expect(slack).not.toContain('XXXX');
    const withSecrets = shortUrl('https://bot:hunter2@ci.example.com/hook?token=abc');
    expect(withSecrets).toBe('ci.example.com/hook?…');
    expect(shortUrl('not a url')).toBe('not a url');
  });

  it('reads flag keys separated by commas, spaces or lines; none is every flag', () => {
    expect(parseFlagKeys('xp-multiplier, double-xp\nboss_hp  xp-multiplier')).toEqual(['xp-multiplier', 'double-xp', 'boss_hp']);
    expect(parseFlagKeys('')).toBeNull();
    expect(parseFlagKeys(' , \n')).toBeNull();
  });

  it("offers Redeliver on each event's newest line, unless that event waits for its next attempt", () => {
    const lines = [
      line('msg_b', 'succeeded', 2),
      line('msg_b', 'failed', 1),
      line('msg_c', 'pending', 2),
      line('msg_c', 'failed', 1),
      line('msg_d', 'skipped', 0),
    ];
    expect([...redeliverable(lines)]).toEqual([lines[0], lines[4]]);
  });
});
