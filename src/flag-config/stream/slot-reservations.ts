import type { Logger } from '@nestjs/common';
import { SLOT_RENEW_MS, StreamSlots } from './stream-slots';

/** Open streams per key across the deployment (StreamSlots); the next is refused with 429. */
export const MAX_STREAMS_PER_KEY = 20;

/**
 * A place for one stream of a key, taken before the stream's payload is read so that racing opens cannot pass the
 * cap. The stream opened in it keeps it; `release` gives it back when no stream will be opened.
 */
export interface StreamSlot {
  readonly id: string | undefined;
  /** The stream opened in it holds it now (the hub calls this). */
  keep(): void;
  release(): void;
}

/**
 * This instance's side of the per-key cap: the slots it takes in StreamSlots (one row per stream, across the
 * deployment), those of streams still being opened, the deletes of ended streams' rows, and the renewal of its
 * rows while its streams run. `openOf` is the number of the key's streams open here.
 */
export class SlotReservations {
  /** Slots taken for streams still being opened, by key. */
  private readonly opening = new Map<string, number>();
  /** Deletes of slots of this key's ended streams still on their way: a take for the key waits for them. */
  private readonly releasing = new Map<string, Promise<void>>();
  private slotsUnavailable = false;

  /** `startedAt`: the clock's time now; the first renewal is due SLOT_RENEW_MS after it. */
  constructor(
    private readonly slots: StreamSlots,
    private readonly logger: Logger,
    private readonly openOf: (keyId: string) => number,
    private renewedAt: number,
  ) {}

  /**
   * A place for one more stream of this key, or null when the key holds MAX_STREAMS_PER_KEY, open or opening,
   * across the deployment (StreamSlots). While the database is away, the count is this instance's alone, as the
   * poll's limit is without Redis: streams keep opening, each instance holding the key to the cap.
   */
  async reserve(keyId: string, now: number): Promise<StreamSlot | null> {
    const opening = this.opening.get(keyId) ?? 0;
    if (this.openOf(keyId) + opening >= MAX_STREAMS_PER_KEY) return null;
    this.opening.set(keyId, opening + 1);
    let released = false;
    const leave = () => {
      if (released) return;
      released = true;
      const left = (this.opening.get(keyId) ?? 1) - 1;
      if (left > 0) this.opening.set(keyId, left);
      else this.opening.delete(keyId);
    };
    let id: string | null | undefined;
    try {
      await this.releasing.get(keyId);
      id = await this.slots.take(keyId, MAX_STREAMS_PER_KEY, now);
      if (this.slotsUnavailable) this.logger.log('Stream slots are counted across instances again');
      this.slotsUnavailable = false;
    } catch (error) {
      if (!this.slotsUnavailable) this.logger.warn(`Stream slots are counted on this instance alone until the database answers: ${String(error)}`);
      this.slotsUnavailable = true;
      id = undefined;
    }
    if (id === null) {
      leave();
      return null;
    }
    return {
      id,
      keep: leave,
      release: () => {
        if (released) return;
        leave();
        if (id) this.free(keyId, id);
      },
    };
  }

  /** Deletes a slot's row; a take for the same key on this instance waits for it. */
  free(keyId: string, slotId: string): void {
    const freed = (this.releasing.get(keyId) ?? Promise.resolve())
      .then(() => this.slots.release(slotId))
      .catch((error: unknown) => this.logger.warn(`Could not release a stream slot (it expires by itself): ${String(error)}`))
      .finally(() => {
        if (this.releasing.get(keyId) === freed) this.releasing.delete(keyId);
      });
    this.releasing.set(keyId, freed);
  }

  /** Every SLOT_RENEW_MS, as of `now`, pushes back the expiry of this instance's rows, if it has open streams. */
  renewIfDue(now: number, hasStreams: boolean): void {
    if (now - this.renewedAt < SLOT_RENEW_MS) return;
    this.renewedAt = now;
    if (hasStreams) {
      this.slots.renew(now).catch((error: unknown) => this.logger.warn(`Could not renew the stream slots of this instance: ${String(error)}`));
    }
  }

  /** Gives back every slot of this instance at once (its streams have ended), rather than when their rows expire. */
  async releaseAll(): Promise<void> {
    await Promise.all(this.releasing.values());
    await this.slots
      .releaseAll()
      .catch((error: unknown) => this.logger.warn(`Could not release the stream slots of this instance: ${String(error)}`));
  }
}
