import { IsArray, IsString, validate } from 'class-validator';
import { BoundedList, listError, overlongList } from './bounded-list';

const MILLION = 1_000_000;

class Listed {
  @IsArray()
  @BoundedList(MILLION, { unique: true })
  @IsString({ each: true })
  keys: unknown;
}

class Extended extends Listed {}

/** An array of `length` items that counts how many of them are read. */
function counted(length: number): { list: string[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(
    Array.from({ length }, (_, index) => `key-${index}`),
    {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads += 1;
        return Reflect.get(target, property, receiver) as unknown;
      },
    },
  );
  return { list, reads: () => reads };
}

describe('BoundedList', () => {
  it('checks a million items for duplicates in one pass (comparing every pair would take hours)', async () => {
    const keys = Array.from({ length: MILLION }, (_, index) => `key-${index}`);
    expect(await validate(Object.assign(new Listed(), { keys }))).toEqual([]);
    keys[MILLION - 1] = 'key-5';
    const [error] = await validate(Object.assign(new Listed(), { keys }));
    expect(error.constraints).toEqual({ boundedList: 'keys must not hold "key-5" twice' });
  });

  it('refuses a list over its cap on its length, reading none of its items', () => {
    const { list, reads } = counted(11);
    expect(listError(list, 10, true, 'keys')).toBe('keys must hold at most 10 items (got 11)');
    expect(reads()).toBe(0);
  });

  it('finds a body field over its cap before anything reads an item, in the class and the classes it extends', () => {
    const { list, reads } = counted(MILLION + 1);
    expect(overlongList({ keys: list }, Listed)).toBe(`keys must hold at most ${MILLION} items (got ${MILLION + 1})`);
    expect(overlongList({ keys: list }, Extended)).toBe(`keys must hold at most ${MILLION} items (got ${MILLION + 1})`);
    expect(reads()).toBe(0);
    expect(overlongList({ keys: ['a', 'a'] }, Listed)).toBeNull();
    expect(overlongList({ keys: 'not a list' }, Listed)).toBeNull();
    expect(overlongList([list], Listed)).toBeNull();
    expect(overlongList({ keys: list }, undefined)).toBeNull();
  });

  it('names a duplicate as JSON, cut short when long, and leaves what is not a list to IsArray', () => {
    const long = 'x'.repeat(200);
    expect(listError([long, long], 10, true, 'keys')).toBe(`keys must not hold "${'x'.repeat(78)}… twice`);
    expect(listError([1, 2, 1], 10, true, 'ids')).toBe('ids must not hold 1 twice');
    expect(listError([1, 1], 10, false, 'ids')).toBeNull();
    expect(listError('a', 10, true, 'ids')).toBeNull();
  });
});
