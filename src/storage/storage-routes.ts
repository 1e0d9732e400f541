import { API_PREFIX } from '../http/api-prefix';

/** The storage API, under the global prefix: /v1/storage. */
export const STORAGE_API_ROUTE = 'storage';
/** The upload host, at the root of PUBLIC_URL: {upload_url} is $PUBLIC_URL/upload. */
export const UPLOAD_ROUTE = 'upload';
/** The CDN route, at the root of CDN_URL: {cdn_url}/c/<organizationId>/<mediaId>. */
export const CDN_ROUTE = 'c';

/**
 * Where the storage surface is served. Its controllers mount on these routes, and every error under these
 * paths is answered in the storage shape `{error: {code, message}}`, whether it comes from a storage
 * controller or arises before routing (a malformed body, an unknown route).
 */
export const STORAGE_PATHS = [`/${API_PREFIX}/${STORAGE_API_ROUTE}`, `/${UPLOAD_ROUTE}`, `/${CDN_ROUTE}`];
