import { compareVersions, parseVersion } from './semantic-version';

describe('semantic versions', () => {
  const order = (a: string, b: string) => Math.sign(compareVersions(parseVersion(a)!, parseVersion(b)!));

  it('counts a missing minor or patch as 0', () => {
    expect(parseVersion('1.4')).toEqual({ core: [1, 4, 0], prerelease: [] });
    expect(parseVersion('2')).toEqual({ core: [2, 0, 0], prerelease: [] });
    expect(order('1.4', '1.4.0')).toBe(0);
    expect(order('1.4', '1.4.1')).toBe(-1);
  });

  it('compares numbers as numbers, not text', () => {
    expect(order('1.10.0', '1.9')).toBe(1);
    expect(order('1.9.9', '1.10')).toBe(-1);
    expect(order('10.0.0', '9.99.99')).toBe(1);
  });

  it('follows semver.org precedence for pre-releases, and ignores build metadata', () => {
    const ascending = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
    for (let i = 1; i < ascending.length; i++) expect([ascending[i - 1], order(ascending[i - 1], ascending[i])]).toEqual([ascending[i - 1], -1]);
    expect(order('1.0.0+build.1', '1.0.0+build.2')).toBe(0);
    expect(order('1.0.0-2', '1.0.0-10')).toBe(-1);
    expect(order('1.0.0-99999999999999999999', '1.0.0-100000000000000000000')).toBe(-1);
  });

  it.each(['v1.4', '1.04', '01.4', '1.4.', '1..4', '', ' 1.4', '1.4.0-', '1.4.0-01', '1.4.0+', '1.2.3.4', 'latest'])('refuses %j', (text) => {
    expect(parseVersion(text)).toBeNull();
  });

  it('refuses what is not a string', () => {
    expect(parseVersion(1.4)).toBeNull();
    expect(parseVersion(null)).toBeNull();
    expect(parseVersion(['1.4'])).toBeNull();
  });
});
