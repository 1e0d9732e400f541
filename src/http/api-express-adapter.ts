import { ExpressAdapter } from '@nestjs/platform-express';

/**
 * Express, with Nest's "no such route" answer (404 NOT_FOUND in the API's error shape, through the exception filters)
 * for every path. NestJS 12 mounts that handler under the global prefix and on the excluded routes alone, so a
 * request for any other path (`/consoles`, `POST /console`, `/no/such/route`) reached Express's own HTML page;
 * NestJS 11, which this restores, mounted it at the root.
 */
export class ApiExpressAdapter extends ExpressAdapter {
  override setNotFoundHandler(handler: Parameters<ExpressAdapter['setNotFoundHandler']>[0]): ReturnType<ExpressAdapter['setNotFoundHandler']> {
    return this.use(handler);
  }

  override reply(response: unknown, body: unknown, statusCode?: number): unknown {
    return super.reply(response, body, chosenStatus(response as object) ?? statusCode);
  }
}

const CHOSEN_STATUS = Symbol('flagstore:chosen-status');

/**
 * The status a route chose from its input, where one route answers two ways (POST /v1/flags/import: 200 with the
 * import's report, 201 with the change request made of it). Nest sends a route's fixed status (@HttpCode) after the
 * handler ran, over anything the handler set; ApiExpressAdapter.reply sends this one instead.
 */
export function answerWithStatus(response: object, status: number): void {
  (response as { [CHOSEN_STATUS]?: number })[CHOSEN_STATUS] = status;
}

/** The status `answerWithStatus` chose for this response, if any. */
export function chosenStatus(response: object): number | undefined {
  return (response as { [CHOSEN_STATUS]?: number })[CHOSEN_STATUS];
}
