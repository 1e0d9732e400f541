import { OpenStreams } from './open-streams';

describe('OpenStreams', () => {
  const stream = (organizationId: string, keyId: string) => ({ organizationId, keyId });

  it('finds streams by organization and by key, and counts them', () => {
    const streams = new OpenStreams<{ organizationId: string; keyId: string }>();
    const [a, b, c] = [stream('org-1', 'key-1'), stream('org-1', 'key-2'), stream('org-2', 'key-3')];
    expect(streams.isEmpty).toBe(true);
    for (const open of [a, b, c]) streams.add(open);
    expect(streams.size).toBe(3);
    expect(streams.isEmpty).toBe(false);
    expect(streams.ofOrganization('org-1')).toEqual([a, b]);
    expect(streams.ofKey('key-2')).toEqual([b]);
    expect(streams.countOfKey('key-1')).toBe(1);
    expect(streams.countOfKey('key-9')).toBe(0);
    expect(streams.organizations()).toEqual(['org-1', 'org-2']);
    expect(streams.all()).toEqual([a, b, c]);
    expect(streams.hasOrganization('org-2')).toBe(true);
  });

  it('says when a stream was its organization’s last, and when it was already gone', () => {
    const streams = new OpenStreams<{ organizationId: string; keyId: string }>();
    const [a, b] = [stream('org-1', 'key-1'), stream('org-1', 'key-1')];
    streams.add(a);
    streams.add(b);
    expect(streams.remove(a)).toEqual({ removed: true, lastOfOrganization: false });
    expect(streams.remove(a)).toEqual({ removed: false, lastOfOrganization: false });
    expect(streams.remove(b)).toEqual({ removed: true, lastOfOrganization: true });
    expect(streams.hasOrganization('org-1')).toBe(false);
    expect(streams.isEmpty).toBe(true);
  });

  it('hands out copies, so streams can be removed while going through them', () => {
    const streams = new OpenStreams<{ organizationId: string; keyId: string }>();
    for (let index = 0; index < 3; index += 1) streams.add(stream('org-1', 'key-1'));
    for (const open of streams.ofKey('key-1')) streams.remove(open);
    expect(streams.size).toBe(0);
  });
});
