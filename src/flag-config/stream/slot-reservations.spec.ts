import type { Logger } from '@nestjs/common';
import { MAX_STREAMS_PER_KEY, SlotReservations } from './slot-reservations';
import { SLOT_RENEW_MS, StreamSlots } from './stream-slots';

describe('SlotReservations', () => {
  const now = Date.parse('2026-12-04T18:00:00Z');
  let taken: number;
  let slots: { take: jest.Mock; release: jest.Mock; renew: jest.Mock; releaseAll: jest.Mock };
  let logger: { log: jest.Mock; warn: jest.Mock };
  let open: Record<string, number>;
  let reservations: SlotReservations;

  beforeEach(() => {
    taken = 0;
    slots = {
      take: jest.fn(async () => `slot-${(taken += 1)}`),
      release: jest.fn(async () => undefined),
      renew: jest.fn(async () => undefined),
      releaseAll: jest.fn(async () => undefined),
    };
    logger = { log: jest.fn(), warn: jest.fn() };
    open = {};
    reservations = new SlotReservations(slots as unknown as StreamSlots, logger as unknown as Logger, (keyId) => open[keyId] ?? 0, now);
  });

  it('counts the key’s open streams and those still opening against the cap of 20', async () => {
    expect(MAX_STREAMS_PER_KEY).toBe(20);
    open = { 'key-1': MAX_STREAMS_PER_KEY - 2, 'key-2': MAX_STREAMS_PER_KEY };
    const first = await reservations.reserve('key-1', now);
    expect(first).toMatchObject({ id: 'slot-1' });
    expect(slots.take).toHaveBeenCalledWith('key-1', MAX_STREAMS_PER_KEY, now);
    expect(await reservations.reserve('key-1', now)).not.toBeNull();
    expect(await reservations.reserve('key-1', now)).toBeNull();
    expect(slots.take).toHaveBeenCalledTimes(2);
    expect(await reservations.reserve('key-2', now)).toBeNull();
    first!.release();
    expect(await reservations.reserve('key-1', now)).not.toBeNull();
  });

  it('lets a kept slot count as an open stream instead, and releases a slot’s row once', async () => {
    const slot = (await reservations.reserve('key-1', now))!;
    slot.keep();
    slot.release();
    expect(slots.release).not.toHaveBeenCalled();
    const other = (await reservations.reserve('key-1', now))!;
    other.release();
    other.release();
    await reservations.releaseAll();
    expect(slots.release.mock.calls).toEqual([['slot-2']]);
  });

  it('refuses, and gives the place back, when the key is at its cap across the deployment', async () => {
    slots.take.mockResolvedValueOnce(null);
    open = { 'key-1': MAX_STREAMS_PER_KEY - 1 };
    expect(await reservations.reserve('key-1', now)).toBeNull();
    expect(await reservations.reserve('key-1', now)).toMatchObject({ id: 'slot-1' });
  });

  it('takes a slot for a key only once the deletes of its ended streams’ rows are done', async () => {
    let deleted!: () => void;
    slots.release.mockImplementationOnce(() => new Promise<void>((resolve) => (deleted = resolve)));
    reservations.free('key-1', 'slot-0');
    const reserved = reservations.reserve('key-1', now);
    await new Promise((resolve) => setImmediate(resolve));
    expect(slots.take).not.toHaveBeenCalled();
    deleted();
    expect(await reserved).toMatchObject({ id: 'slot-1' });
  });

  it('counts on this instance alone while the slots cannot be read, saying so once, and again when they can', async () => {
    slots.take.mockRejectedValue(new Error('connection refused'));
    const alone = await reservations.reserve('key-1', now);
    expect(alone).not.toBeNull();
    expect(alone!.id).toBeUndefined();
    await reservations.reserve('key-1', now);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    alone!.release();
    expect(slots.release).not.toHaveBeenCalled();
    slots.take.mockResolvedValue('slot-9');
    expect(await reservations.reserve('key-1', now)).toMatchObject({ id: 'slot-9' });
    expect(logger.log).toHaveBeenCalledWith('Stream slots are counted across instances again');
  });

  it('renews this instance’s rows every 20 s while it has streams', () => {
    const start = now;
    reservations.renewIfDue(start + SLOT_RENEW_MS - 1_000, true);
    expect(slots.renew).not.toHaveBeenCalled();
    const due = now + SLOT_RENEW_MS;
    reservations.renewIfDue(due, true);
    reservations.renewIfDue(due + 1_000, true);
    expect(slots.renew.mock.calls).toEqual([[due]]);
    reservations.renewIfDue(due + SLOT_RENEW_MS, false);
    reservations.renewIfDue(due + SLOT_RENEW_MS + 1_000, true);
    expect(slots.renew).toHaveBeenCalledTimes(1);
    reservations.renewIfDue(due + 2 * SLOT_RENEW_MS, true);
    expect(slots.renew).toHaveBeenLastCalledWith(due + 2 * SLOT_RENEW_MS);
  });

  it('gives back every slot at shutdown once the deletes on their way are done, and a failure only warns', async () => {
    let deleted!: () => void;
    slots.release.mockImplementationOnce(() => new Promise<void>((resolve) => (deleted = resolve)));
    slots.releaseAll.mockRejectedValueOnce(new Error('connection refused'));
    reservations.free('key-1', 'slot-0');
    const released = reservations.releaseAll();
    await new Promise((resolve) => setImmediate(resolve));
    expect(slots.releaseAll).not.toHaveBeenCalled();
    deleted();
    await released;
    expect(slots.releaseAll).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(expect.stringMatching(/Could not release the stream slots/));
  });
});
