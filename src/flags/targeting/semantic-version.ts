/**
 * Semantic Versioning 2.0.0 precedence (semver.org, section 11), with a missing minor or patch counted as 0:
 * `1.4` is `1.4.0`. Build metadata (`+…`) is ignored. Anything else, `v1.4` or `1.04` included, is not a version.
 */
const VERSION =
  /^(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?(?:\.(0|[1-9]\d*))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const NUMERIC = /^\d+$/;

export interface SemanticVersion {
  core: [number, number, number];
  prerelease: string[];
}

/** The version `text` names, or null when it is not one. */
export function parseVersion(text: unknown): SemanticVersion | null {
  if (typeof text !== 'string' || text.length > 256) return null;
  const match = VERSION.exec(text);
  if (!match) return null;
  const prerelease = match[4] === undefined ? [] : match[4].split('.');
  // A numeric pre-release identifier must not have leading zeros (semver.org, item 9).
  if (prerelease.some((id) => NUMERIC.test(id) && id.length > 1 && id.startsWith('0'))) return null;
  const core = [match[1], match[2] ?? '0', match[3] ?? '0'].map(Number) as [number, number, number];
  if (!core.every(Number.isSafeInteger)) return null;
  return { core, prerelease };
}

/** Negative when a < b, 0 when they have the same precedence, positive when a > b. */
export function compareVersions(a: SemanticVersion, b: SemanticVersion): number {
  for (let i = 0; i < 3; i++) if (a.core[i] !== b.core[i]) return a.core[i] - b.core[i];
  // A pre-release has lower precedence than its release.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifiers(a.prerelease[i], b.prerelease[i]);
    if (order !== 0) return order;
  }
  return a.prerelease.length - b.prerelease.length;
}

/** Numeric identifiers compare as numbers and below alphanumeric ones; alphanumeric ones compare in ASCII order. */
function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
