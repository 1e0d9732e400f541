/**
 * Where the storage surface is served. Every error under these routes is answered in the storage shape
 * `{error: {code, message}}`, whether it comes from a storage controller or arises before routing (a malformed
 * body, an unknown route): see app/surfaces.ts.
 */

/** The storage API, under the global prefix: /v1/storage. */
export const STORAGE_API_ROUTE = 'storage';
/** The upload host, at the root of PUBLIC_URL: {upload_url} is $PUBLIC_URL/upload. */
export const UPLOAD_ROUTE = 'upload';
/** The CDN route, at the root of CDN_URL: {cdn_url}/c/<organizationId>/<mediaId>. */
export const CDN_ROUTE = 'c';
