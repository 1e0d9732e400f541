/**
 * The parts of the HTTP surface that answer differently (error shape, CORS, body parsing, documented errors):
 * - `api`: the API under base_url; `admin`: its admin routes (never to browsers);
 * - `storage`: the storage API under base_url, whose errors take the storage shape;
 * - `upload`: the upload host (bodies are file bytes, any origin); `cdn`: the CDN (public, any origin);
 * - `ofrep`: the OpenFeature routes at the root (OFREP's error shape);
 * - `other`: everything else (health, metrics, docs).
 */
export type Surface = 'api' | 'admin' | 'storage' | 'upload' | 'cdn' | 'ofrep' | 'other';

export interface SurfaceRoute {
  /** A path prefix, such as `/v1/storage`: the path itself and everything below it. */
  prefix: string;
  surface: Surface;
}

/**
 * Which surface a request path belongs to, decided in this one place from the route prefixes the features
 * export (the app composes the map: see app/surfaces.ts). Case-insensitive, as the router is: `/V1/Admin`
 * reaches the admin API and is treated as the admin API. The longest matching prefix wins.
 */
export class SurfaceMap {
  private readonly routes: readonly SurfaceRoute[];

  constructor(routes: readonly SurfaceRoute[]) {
    this.routes = routes
      .map((route) => ({ prefix: route.prefix.toLowerCase(), surface: route.surface }))
      .sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The surface of a request URL (its query, if any, is ignored) or of a path of the OpenAPI document. */
  of(url: string | undefined): Surface {
    if (url === undefined) return 'other';
    const query = url.indexOf('?');
    const path = (query === -1 ? url : url.slice(0, query)).toLowerCase();
    for (const { prefix, surface } of this.routes) {
      if (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47) /* / */) return surface;
    }
    return 'other';
  }

  /** Whether the request's body is file bytes for the upload host rather than JSON. */
  isUpload(url: string | undefined): boolean {
    return this.of(url) === 'upload';
  }
}
