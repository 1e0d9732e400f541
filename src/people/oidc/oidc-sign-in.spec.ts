import { isLocalReturnTo } from './oidc-sign-in';

describe('isLocalReturnTo', () => {
  it('accepts a path on this service, with its query', () => {
    for (const path of ['/', '/console', '/console/flags?environment=production&q=a%20b', `/${'r'.repeat(1023)}`]) {
      expect(isLocalReturnTo(path)).toBe(true);
    }
  });

  it('refuses anything a browser would take elsewhere, or that is not a plain path', () => {
    const elsewhere = ['https://evil.test/', '//evil.test/', '/\\evil.test/', '\\\\evil.test', 'javascript:alert(1)', 'console', ''];
    const unusual = ['/a b', '/a\tb', '/a\nb', '/\u00e9', `/${'r'.repeat(1024)}`];
    for (const value of [...elsewhere, ...unusual]) expect(isLocalReturnTo(value)).toBe(false);
  });
});
