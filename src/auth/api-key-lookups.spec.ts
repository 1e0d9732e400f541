import { InFlightLookups } from './api-key-lookups';

/** A lookup the test answers: `start` for InFlightLookups.run, and what it was given. */
function lookup<T>() {
  let answer!: (value: T) => void;
  let fail!: (error: unknown) => void;
  let current!: () => boolean;
  const start = jest.fn((given: () => boolean) => {
    current = given;
    return new Promise<T>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
  });
  return { start, answer: (value: T) => answer(value), fail: (error: unknown) => fail(error), current: () => current() };
}

describe('InFlightLookups', () => {
  it('shares the lookup in flight among concurrent misses of one key, and starts one per key', async () => {
    const lookups = new InFlightLookups<string>();
    const first = lookup<string>();
    const other = lookup<string>();
    const a = lookups.run('hash-1', first.start);
    const b = lookups.run('hash-1', lookup<string>().start);
    const c = lookups.run('hash-2', other.start);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    first.answer('key-1');
    other.answer('key-2');
    expect(await Promise.all([a, b, c])).toEqual(['key-1', 'key-1', 'key-2']);
  });

  it('starts another lookup once one has answered, or failed', async () => {
    const lookups = new InFlightLookups<string>();
    const first = lookup<string>();
    const answered = lookups.run('hash-1', first.start);
    first.answer('key-1');
    await answered;
    const second = lookup<string>();
    const failed = lookups.run('hash-1', second.start);
    expect(second.start).toHaveBeenCalledTimes(1);
    second.fail(new Error('connection refused'));
    await expect(failed).rejects.toThrow('connection refused');
    const third = lookup<string>();
    void lookups.run('hash-1', third.start);
    expect(third.start).toHaveBeenCalledTimes(1);
  });

  it('after a revocation, shares no lookup that started before it, and tells that one its answer is not current', () => {
    const lookups = new InFlightLookups<string>();
    const before = lookup<string>();
    const early = lookups.run('hash-1', before.start);
    expect(before.current()).toBe(true);
    lookups.revoked();
    expect(before.current()).toBe(false);
    const after = lookup<string>();
    const late = lookups.run('hash-1', after.start);
    expect(late).not.toBe(early);
    expect(after.current()).toBe(true);
    expect(lookups.run('hash-1', lookup<string>().start)).toBe(late);
    // The earlier lookup answering does not end the later one's sharing.
    before.answer('key-1');
    return early.then(() => expect(lookups.run('hash-1', lookup<string>().start)).toBe(late));
  });
});
