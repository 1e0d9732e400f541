import { SurfaceMap } from './surfaces';

describe('SurfaceMap', () => {
  const map = new SurfaceMap([
    { prefix: '/v1', surface: 'api' },
    { prefix: '/v1/admin', surface: 'admin' },
    { prefix: '/v1/storage', surface: 'storage' },
    { prefix: '/upload', surface: 'upload' },
    { prefix: '/c', surface: 'cdn' },
    { prefix: '/ofrep', surface: 'ofrep' },
  ]);

  it.each([
    ['/v1/flags', 'api'],
    ['/v1', 'api'],
    ['/v1?x=1', 'api'],
    ['/v1/admin/organizations', 'admin'],
    ['/V1/Admin', 'admin'],
    ['/v1/storage', 'storage'],
    ['/v1/storage?page=1', 'storage'],
    ['/v1/storage/items/1', 'storage'],
    ['/v1/storagex', 'api'],
    ['/upload/abc?sig=1', 'upload'],
    ['/uploads', 'other'],
    ['/c/org/media', 'cdn'],
    ['/cdn', 'other'],
    ['/ofrep/v1/evaluate/flags', 'ofrep'],
    ['/health', 'other'],
    ['/docs-json', 'other'],
    ['/', 'other'],
  ])('puts %s on the %s surface', (url, surface) => {
    expect(map.of(url)).toBe(surface);
  });

  it('answers other for a request without a URL, and knows the upload host', () => {
    expect(map.of(undefined)).toBe('other');
    expect(map.isUpload('/UPLOAD/x')).toBe(true);
    expect(map.isUpload('/v1/storage')).toBe(false);
  });
});
