import { SetMetadata } from '@nestjs/common';

/**
 * Who may call a route, as metadata the global auth guard reads: unmarked routes need an API key or a session in one
 * of the user's organizations (deny by default); `public` routes need nothing; `admin` routes need ADMIN_TOKEN (see
 * auth's AdminOnly); `signedIn` routes need a session and no organization (see auth's SignedIn).
 */
export const ACCESS_KEY = 'auth:access';
export type Access = 'public' | 'admin' | 'signedIn';

/** The route needs no bearer header (health, metrics, docs, the signed upload routes, the CDN). */
export const Public = () => SetMetadata(ACCESS_KEY, 'public' satisfies Access);
