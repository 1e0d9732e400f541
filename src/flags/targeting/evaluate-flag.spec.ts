import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bucketOf, evaluateFlag, EvaluableFlag } from './evaluate-flag';
import { flagRulesError } from './flag-rules';

interface Vectors {
  buckets: { flagKey: string; value: string; bucket: number }[];
  flags: (EvaluableFlag & { type: string })[];
  evaluations: { flag: string; context: Record<string, unknown>; expected: unknown }[];
}

const vectors = JSON.parse(readFileSync(resolve(__dirname, '../../../test/fixtures/targeting-vectors.json'), 'utf8')) as Vectors;

describe('evaluateFlag: the shared test vectors (the SDK passes the same file)', () => {
  it.each(vectors.buckets)('bucket("$flagKey", "$value") is $bucket', ({ flagKey, value, bucket }) => {
    expect(bucketOf(flagKey, value)).toBe(bucket);
  });

  it('holds only valid flags', () => {
    for (const flag of vectors.flags) expect([flag.key, flagRulesError(flag.type, flag.rules ?? [])]).toEqual([flag.key, null]);
  });

  const byKey = new Map(vectors.flags.map((flag) => [flag.key, flag]));
  it.each(vectors.evaluations.map((vector) => [vector.flag, JSON.stringify(vector.context), vector]))('%s with %s', (_flag, _context, vector) => {
    expect(evaluateFlag(byKey.get(vector.flag)!, vector.context)).toEqual(vector.expected);
  });
});

describe('evaluateFlag', () => {
  const rule = (id: string, attribute: string, values: string[], value: unknown) => ({
    id,
    conditions: [{ attribute, operator: 'in' as const, values }],
    value,
  });

  it('gives the first matching rule, in order, when several hold', () => {
    const flag = { key: 'f', value: 0, rules: [rule('a', 'region', ['eu'], 1), rule('b', 'region', ['eu'], 2)] };
    expect(evaluateFlag(flag, { region: 'eu' })).toEqual({ value: 1, reason: 'TARGETING_MATCH', variant: 'a' });
    expect(evaluateFlag({ ...flag, rules: [...flag.rules].reverse() }, { region: 'eu' })).toEqual({
      value: 2,
      reason: 'TARGETING_MATCH',
      variant: 'b',
    });
  });

  it('needs every condition of a rule to hold', () => {
    const flag = {
      key: 'f',
      value: 'off',
      rules: [
        {
          id: 'both',
          conditions: [
            { attribute: 'region', operator: 'in' as const, values: ['eu'] },
            { attribute: 'level', operator: 'gte' as const, values: [5] },
          ],
          value: 'on',
        },
      ],
    };
    expect(evaluateFlag(flag, { region: 'eu', level: 5 }).value).toBe('on');
    expect(evaluateFlag(flag, { region: 'eu', level: 4 }).value).toBe('off');
    expect(evaluateFlag(flag, { region: 'us', level: 5 }).value).toBe('off');
  });

  it('is STATIC for a flag without rules, and for an empty list', () => {
    expect(evaluateFlag({ key: 'f', value: 1 }, { region: 'eu' })).toEqual({ value: 1, reason: 'STATIC', variant: 'default' });
    expect(evaluateFlag({ key: 'f', value: 1, rules: [] }, {})).toEqual({ value: 1, reason: 'STATIC', variant: 'default' });
  });

  it("never reads the context's prototype: toString and constructor are missing unless sent", () => {
    const flag = { key: 'f', value: 'no', rules: [rule('p', 'toString', ['function toString() { [native code] }'], 'yes')] };
    expect(evaluateFlag(flag, {}).value).toBe('no');
    expect(evaluateFlag(flag, { toString: 'function toString() { [native code] }' }).value).toBe('yes');
  });

  it('holds no condition of an operator it does not know (a newer service)', () => {
    const flag = { key: 'f', value: 'no', rules: [{ id: 'x', conditions: [{ attribute: 'a', operator: 'regex', values: ['.*'] }], value: 'yes' }] };
    expect(evaluateFlag(flag as never, { a: 'anything' }).value).toBe('no');
  });
});

describe('percentage rollouts', () => {
  const ids = Array.from({ length: 100_000 }, (_, i) => `player-${i}`);
  const rollout = (from: number, to: number) => ({
    key: 'double-xp',
    value: false,
    rules: [{ id: 'r', conditions: [{ attribute: 'targetingKey', operator: 'percentage' as const, values: [from, to] }], value: true }],
  });

  it('puts between 9.7 % and 10.3 % of 100,000 ids into [0, 10], and never an id into both [0, 10] and [10, 20]', () => {
    const first = rollout(0, 10);
    const next = rollout(10, 20);
    let inFirst = 0;
    let inNext = 0;
    for (const id of ids) {
      const a = evaluateFlag(first, { targetingKey: id }).value === true;
      const b = evaluateFlag(next, { targetingKey: id }).value === true;
      expect(a && b).toBe(false);
      if (a) inFirst++;
      if (b) inNext++;
    }
    expect(inFirst / ids.length).toBeGreaterThanOrEqual(0.097);
    expect(inFirst / ids.length).toBeLessThanOrEqual(0.103);
    expect(inNext / ids.length).toBeGreaterThanOrEqual(0.097);
    expect(inNext / ids.length).toBeLessThanOrEqual(0.103);
  });

  it('grows a rollout by keeping everyone already in it (10 % then 50 % then all)', () => {
    const sample = ids.slice(0, 5000);
    const inAt = (to: number) => new Set(sample.filter((id) => evaluateFlag(rollout(0, to), { targetingKey: id }).value === true));
    const ten = inAt(10);
    const fifty = inAt(50);
    const all = inAt(100);
    for (const id of ten) expect(fifty.has(id)).toBe(true);
    expect(all.size).toBe(sample.length);
  });

  it('salts the bucket with the flag key, so two flags roll out to different players', () => {
    expect(bucketOf('a', 'player-1')).not.toBe(bucketOf('b', 'player-1'));
  });
});
