import { AsyncLocalStorage } from 'node:async_hooks';
import { propagatesContext } from '../../test/support/async-context';
import { TransactionContextGate } from './transactions';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('TransactionContextGate', () => {
  let storage: AsyncLocalStorage<string>;
  afterEach(() => storage.disable());

  it('switches off a storage that was entered before it (as nestjs-cls does when it is imported)', () => {
    storage = new AsyncLocalStorage<string>();
    storage.enterWith('import-time');
    expect(propagatesContext(storage)).toBe(true);
    new TransactionContextGate(storage);
    expect(storage.getStore()).toBeUndefined();
    expect(propagatesContext(storage)).toBe(false);
  });

  it('keeps the storage on while any run is unsettled, and switches it off after the last one', async () => {
    storage = new AsyncLocalStorage<string>();
    const gate = new TransactionContextGate(storage);
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const seen: (string | undefined)[] = [];
    const first = gate.during(() =>
      storage.run('first', async () => {
        await firstHeld;
        return storage.getStore();
      }),
    );
    const second = gate.during(() =>
      storage.run('second', async () => {
        await tick();
        seen.push(storage.getStore());
        // The first run is still unsettled when this one ends.
        return storage.getStore();
      }),
    );
    await expect(second).resolves.toBe('second');
    expect(gate.closed).toBe(false);
    expect(propagatesContext(storage)).toBe(true);
    releaseFirst();
    // The first run reads its own context after the second one ended: the gate did not switch it off.
    await expect(first).resolves.toBe('first');
    expect(seen).toEqual(['second']);
    expect(gate.closed).toBe(true);
    expect(propagatesContext(storage)).toBe(false);
  });

  it('switches the storage off after a run that fails, and passes the failure on', async () => {
    storage = new AsyncLocalStorage<string>();
    const gate = new TransactionContextGate(storage);
    const failing = gate.during(() =>
      storage.run('failing', async () => {
        await tick();
        throw new Error('rolled back');
      }),
    );
    await expect(failing).rejects.toThrow('rolled back');
    expect(gate.closed).toBe(true);
    expect(propagatesContext(storage)).toBe(false);
  });
});
