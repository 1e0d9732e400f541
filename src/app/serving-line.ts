import type { AppConfig } from '../config/app-config';
import { CONSOLE_ROUTE } from '../console/console-assets';

/**
 * The boot log's last line, once the port is bound: the three addresses a newcomer needs (the API, the console people
 * sign in to, the API's documentation), all under PUBLIC_URL, so a service started on another PORT names its own.
 */
export function servingLine(urls: Pick<AppConfig['urls'], 'publicUrl' | 'baseUrl'>): string {
  return `Serving the API at ${urls.baseUrl}, the console at ${urls.publicUrl}/${CONSOLE_ROUTE}, the docs at ${urls.publicUrl}/docs`;
}
