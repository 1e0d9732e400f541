import type { ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request } from 'express';
import { writeApiError } from '../common/filters/api-exception.filter';
import { requestIdOf } from '../common/request-id';

export type { StorageErrorBody } from '../common/filters/api-exception.filter';

/**
 * Bound with @UseFilters on every storage controller (API, upload host, CDN): the storage shape whatever the
 * path looks like. The global filter picks the same shape by path for errors raised before routing.
 */
@Catch()
export class StorageExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    writeApiError(http.getResponse<ServerResponse>(), exception, requestIdOf(http.getRequest<Request>()), 'storage');
  }
}
