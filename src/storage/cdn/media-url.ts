import { CDN_ROUTE } from '../storage-routes';

/** Where the CDN serves a complete file: `{cdn_url}/c/<organizationId>/<mediaId>`. */
export function mediaUrl(cdnUrl: string, organizationId: string, mediaId: string): string {
  return `${cdnUrl}/${CDN_ROUTE}/${organizationId}/${mediaId}`;
}
