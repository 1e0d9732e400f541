import { ApiKey } from './api-key';

/** Lookups waiting for the next batch query, by key hash. */
type Batch = Map<string, { resolve(key: ApiKey | undefined): void; reject(error: unknown): void }[]>;

/**
 * Key lookups go to the database in batches, one query each: a lone lookup goes out at the end of the event
 * loop's turn, but while another batch is in flight, lookups gather for BATCH_WINDOW_MS first. A flood of bad
 * keys, or every game server reconnecting after a deploy, is then a few queries rather than one per request.
 * A batch of more than MAX_BATCH hashes goes out as several queries.
 *
 * The window is a process timer, not the app's clock: it paces queries, it decides nothing about time.
 */
export class ApiKeyBatches {
  static readonly WINDOW_MS = 10;
  /** Hashes per batch query; more go in another query. */
  static readonly MAX_BATCH = 500;

  private batch: Batch | undefined;
  private inFlight = 0;

  /** `query` reads the active keys among the given hashes (ApiKeysRepository.findActiveApiKeysByHashes). */
  constructor(private readonly query: (keyHashes: string[]) => Promise<ApiKey[]>) {}

  /** The active key with this hash, or undefined: answered with the batch it joins. */
  find(keyHash: string): Promise<ApiKey | undefined> {
    return new Promise((resolve, reject) => {
      if (this.batch === undefined) {
        this.batch = new Map();
        if (this.inFlight === 0) setImmediate(() => this.send());
        else setTimeout(() => this.send(), ApiKeyBatches.WINDOW_MS);
      }
      const waiting = this.batch.get(keyHash);
      if (waiting) waiting.push({ resolve, reject });
      else this.batch.set(keyHash, [{ resolve, reject }]);
    });
  }

  private send(): void {
    const batch = this.batch!;
    this.batch = undefined;
    const hashes = [...batch.keys()];
    for (let start = 0; start < hashes.length; start += ApiKeyBatches.MAX_BATCH) {
      const chunk = hashes.slice(start, start + ApiKeyBatches.MAX_BATCH);
      this.inFlight += 1;
      this.query(chunk).then(
        (keys) => {
          this.inFlight -= 1;
          const byHash = new Map(keys.map((key) => [key.keyHash, key]));
          for (const hash of chunk) for (const waiter of batch.get(hash)!) waiter.resolve(byHash.get(hash));
        },
        (error: unknown) => {
          this.inFlight -= 1;
          for (const hash of chunk) for (const waiter of batch.get(hash)!) waiter.reject(error);
        },
      );
    }
  }
}
