/**
 * Streams written to in one go before the fan-out yields to the event loop: one loop over thousands of streams
 * would hold up every poll in flight until its last write; between slices, the requests waiting get their turn.
 */
export const WRITE_SLICE = 256;

/** The change of each organization on its way to its streams: a newer one supersedes an older one still writing. */
export class FanOuts {
  /** Bumped by each change of an organization. */
  private readonly generations = new Map<string, number>();

  /** A change of the organization begins its fan-out: the check returned holds until the next one begins. */
  begin(organizationId: string): () => boolean {
    const generation = (this.generations.get(organizationId) ?? 0) + 1;
    this.generations.set(organizationId, generation);
    return () => this.generations.get(organizationId) === generation;
  }

  /** The organization has no stream here any more: its fan-outs still writing stop. */
  forget(organizationId: string): void {
    this.generations.delete(organizationId);
  }
}

/**
 * Calls `write` for each stream, WRITE_SLICE streams at a time, yielding to the event loop between slices;
 * stops before a slice once `isCurrent` no longer holds (a newer event supersedes this one).
 */
export async function writeInSlices<S>(streams: readonly S[], isCurrent: () => boolean, write: (stream: S) => void): Promise<void> {
  for (let start = 0; start < streams.length; start += WRITE_SLICE) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    if (!isCurrent()) return;
    for (const stream of streams.slice(start, start + WRITE_SLICE)) write(stream);
  }
}
