import { FanOuts, writeInSlices, WRITE_SLICE } from './stream-fan-out';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('stream fan-out', () => {
  it('writes 256 streams at a time, yielding to the event loop between slices', async () => {
    const streams = Array.from({ length: 2 * WRITE_SLICE + 88 }, (_, index) => index);
    const written: number[] = [];
    const done = writeInSlices(
      streams,
      () => true,
      (stream) => written.push(stream),
    );
    expect(WRITE_SLICE).toBe(256);
    expect(written).toHaveLength(256);
    await turn();
    expect(written).toHaveLength(512);
    await done;
    expect(written).toEqual(streams);
  });

  it('stops before the next slice once a newer change of the organization has begun', async () => {
    const fanOuts = new FanOuts();
    const streams = Array.from({ length: 3 * WRITE_SLICE }, (_, index) => index);
    const older: number[] = [];
    const done = writeInSlices(streams, fanOuts.begin('org-1'), (stream) => older.push(stream));
    const newer = fanOuts.begin('org-1');
    await done;
    expect(older).toHaveLength(WRITE_SLICE);
    expect(newer()).toBe(true);
  });

  it('keeps each organization’s fan-outs apart', () => {
    const fanOuts = new FanOuts();
    const first = fanOuts.begin('org-1');
    const other = fanOuts.begin('org-2');
    expect([first(), other()]).toEqual([true, true]);
    fanOuts.begin('org-2');
    expect([first(), other()]).toEqual([true, false]);
  });

  it('stops an organization’s fan-out once the organization is forgotten (its last stream closed)', async () => {
    const fanOuts = new FanOuts();
    const isCurrent = fanOuts.begin('org-1');
    fanOuts.forget('org-1');
    expect(isCurrent()).toBe(false);
    const written: number[] = [];
    await writeInSlices([1, 2, 3], isCurrent, (stream) => written.push(stream));
    expect(written).toEqual([]);
  });

  it('writes nothing when there is no stream', async () => {
    const write = jest.fn();
    await writeInSlices([], () => true, write);
    expect(write).not.toHaveBeenCalled();
  });
});
