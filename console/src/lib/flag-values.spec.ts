import { depthOf, parseJsonValue, parseNumberValue, preview, valueProblem } from './flag-values';

describe("the console's value checks (the service's 4 KB and 4-level rules, as a person types)", () => {
  it('counts depth in containers, as the service does', () => {
    expect(depthOf(1)).toBe(0);
    expect(depthOf({ a: 1 })).toBe(1);
    expect(depthOf({ a: [{ b: 1 }] })).toBe(3);
    expect(depthOf(null)).toBe(0);
  });

  it('takes 4 levels and refuses 5', () => {
    expect(parseJsonValue('{"a":{"b":{"c":{"d":1}}}}').problem).toBeNull();
    expect(parseJsonValue('{"a":{"b":{"c":{"d":{"e":1}}}}}').problem).toBe('The value nests 5 levels deep; at most 4 are allowed.');
  });

  it('takes 4096 bytes of serialized JSON and refuses 4097, counting UTF-8 bytes', () => {
    const fits = JSON.stringify('x'.repeat(4094)); // 4096 with its quotes
    expect(parseJsonValue(fits).problem).toBeNull();
    expect(parseJsonValue(JSON.stringify('x'.repeat(4095))).problem).toBe('The value is 4097 bytes; at most 4096 are allowed.');
    expect(parseJsonValue(JSON.stringify('é'.repeat(2047))).problem).toBeNull(); // 4094 bytes + 2 quotes
    expect(parseJsonValue(JSON.stringify('é'.repeat(2048))).problem).toMatch(/4098 bytes/);
  });

  it('says what is wrong with text that is not JSON', () => {
    expect(parseJsonValue('{"a":').problem).toMatch(/^Not valid JSON: /);
    expect(parseJsonValue('null')).toEqual({ value: null, problem: null });
  });

  it('checks each type', () => {
    expect(valueProblem('boolean', 'true')).toBe('The value must be true or false.');
    expect(valueProblem('number', Infinity)).toBe('The value must be a finite number.');
    expect(valueProblem('string', 5)).toBe('The value must be text.');
    expect(valueProblem('string', 'x'.repeat(5000))).toMatch(/bytes/);
    expect(valueProblem('boolean', false)).toBeNull();
  });

  it('reads numbers as typed', () => {
    expect(parseNumberValue(' 2.5 ')).toEqual({ value: 2.5, problem: null });
    expect(parseNumberValue('').problem).toBe('The value must be a finite number.');
    expect(parseNumberValue('1e400').problem).toBe('The value must be a finite number.');
    expect(parseNumberValue('abc').problem).toBe('The value must be a finite number.');
  });

  it('shortens long values for the list', () => {
    expect(preview('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(preview({ a: 1 })).toBe('{"a":1}');
  });
});
