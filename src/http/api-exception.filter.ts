import type { ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request } from 'express';
import { errorShapeOf, writeApiError } from './error-response';
import { requestIdOf } from './request-id';
import { SurfaceMap } from './surfaces';

/**
 * The one exception filter: everything thrown in a request, including before routing (body parsing,
 * unknown routes), answered in the shape of the surface the request addressed.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(private readonly surfaces: SurfaceMap) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const shape = errorShapeOf(this.surfaces.of(request.originalUrl ?? request.url));
    writeApiError(http.getResponse<ServerResponse>(), exception, requestIdOf(request), shape);
  }
}
