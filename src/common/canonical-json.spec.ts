import { canonicalJson, jsonEqual } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  // Parsed from text, as a request body is: JSON.parse makes these ordinary own keys.
  it('keeps __proto__, constructor and prototype keys as ordinary keys, nested ones included', () => {
    const value = JSON.parse('{"z":1,"__proto__":{"b":1,"a":2},"constructor":{"prototype":[{"__proto__":null}]}}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"a":2,"b":1},"constructor":{"prototype":[{"__proto__":null}]},"z":1}');
  });

  it('tells apart values that differ only under __proto__', () => {
    expect(jsonEqual(JSON.parse('{"__proto__":{"a":1}}'), JSON.parse('{"__proto__":{"a":2}}'))).toBe(false);
    expect(jsonEqual(JSON.parse('{"__proto__":{"a":1}}'), {})).toBe(false);
    expect(jsonEqual(JSON.parse('{"__proto__":{"a":1},"b":2}'), JSON.parse('{"b":2,"__proto__":{"a":1}}'))).toBe(true);
  });
});
