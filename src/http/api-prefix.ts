/** Every API route is served under `$PUBLIC_URL/v1`; health, the upload host and the CDN sit at the root. */
export const API_PREFIX = 'v1';
