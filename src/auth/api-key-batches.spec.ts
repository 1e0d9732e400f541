import { ApiKey } from './api-key';
import { ApiKeyBatches } from './api-key-batches';

const keyOf = (keyHash: string) => ({ id: `id-of-${keyHash}`, keyHash }) as ApiKey;
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Batches over a query the test answers: each query's hashes, and its answer or failure. */
function setup() {
  const queries: { hashes: string[]; answer(): void; fail(error: unknown): void }[] = [];
  const batches = new ApiKeyBatches(
    (hashes) =>
      new Promise<ApiKey[]>((resolve, reject) => {
        // Answers with a key for every hash but those starting with "missing".
        queries.push({ hashes, answer: () => resolve(hashes.filter((hash) => !hash.startsWith('missing')).map(keyOf)), fail: reject });
      }),
  );
  return { batches, queries };
}

describe('ApiKeyBatches', () => {
  afterEach(() => jest.useRealTimers());

  it('sends the lookups of one turn as one query, at its end, and answers each with its own key', async () => {
    const { batches, queries } = setup();
    const found = [batches.find('hash-1'), batches.find('missing-1'), batches.find('hash-1')];
    expect(queries).toHaveLength(0);
    await endOfTurn();
    expect(queries.map((query) => query.hashes)).toEqual([['hash-1', 'missing-1']]);
    queries[0].answer();
    expect(await Promise.all(found)).toEqual([keyOf('hash-1'), undefined, keyOf('hash-1')]);
  });

  it('while a query is in flight, gathers lookups for BATCH_WINDOW_MS into the next one', async () => {
    const { batches, queries } = setup();
    void batches.find('hash-1');
    await endOfTurn();
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    const later = [batches.find('hash-2')];
    await endOfTurn();
    later.push(batches.find('hash-3'));
    jest.advanceTimersByTime(ApiKeyBatches.WINDOW_MS - 1);
    expect(queries).toHaveLength(1);
    jest.advanceTimersByTime(1);
    expect(queries.map((query) => query.hashes)).toEqual([['hash-1'], ['hash-2', 'hash-3']]);
    queries[1].answer();
    expect(await Promise.all(later)).toEqual([keyOf('hash-2'), keyOf('hash-3')]);
  });

  it('splits a batch larger than MAX_BATCH into several queries', async () => {
    const { batches, queries } = setup();
    const hashes = Array.from({ length: ApiKeyBatches.MAX_BATCH + 1 }, (_, index) => `hash-${index}`);
    const found = hashes.map((hash) => batches.find(hash));
    await endOfTurn();
    expect(queries.map((query) => query.hashes.length)).toEqual([ApiKeyBatches.MAX_BATCH, 1]);
    for (const query of queries) query.answer();
    expect(await Promise.all(found)).toEqual(hashes.map(keyOf));
  });

  it('fails the lookups of a failed query, and only those', async () => {
    const { batches, queries } = setup();
    const hashes = Array.from({ length: ApiKeyBatches.MAX_BATCH + 1 }, (_, index) => `hash-${index}`);
    const found = hashes.map((hash) =>
      batches.find(hash).then(
        () => 'found',
        (error: Error) => error.message,
      ),
    );
    await endOfTurn();
    queries[0].fail(new Error('connection refused'));
    queries[1].answer();
    const outcomes = await Promise.all(found);
    expect(outcomes.slice(0, ApiKeyBatches.MAX_BATCH).every((outcome) => outcome === 'connection refused')).toBe(true);
    expect(outcomes.at(-1)).toBe('found');
  });
});
