import { OFREP_ROOT } from '../flag-config/ofrep/ofrep.controller';
import { API_PREFIX } from '../http/api-prefix';
import { SurfaceMap } from '../http/surfaces';
import { ADMIN_ROUTE } from '../organizations/admin.controller';
import { CDN_ROUTE, STORAGE_API_ROUTE, UPLOAD_ROUTE } from '../storage/storage-routes';

/**
 * The one surface map of this service, from the routes the features mount on: the error shape, the CORS rules,
 * body parsing and the errors documented for every operation all read it (see http/surfaces.ts).
 */
export const SURFACES = new SurfaceMap([
  { prefix: `/${API_PREFIX}`, surface: 'api' },
  { prefix: `/${API_PREFIX}/${ADMIN_ROUTE}`, surface: 'admin' },
  { prefix: `/${API_PREFIX}/${STORAGE_API_ROUTE}`, surface: 'storage' },
  { prefix: `/${UPLOAD_ROUTE}`, surface: 'upload' },
  { prefix: `/${CDN_ROUTE}`, surface: 'cdn' },
  { prefix: `/${OFREP_ROOT}`, surface: 'ofrep' },
]);
