/** What an error answer is asserted on: supertest's response, or any `{ status, body }`. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
}

/** A storage-surface error (storage API, upload host, CDN): `{ error: { code, message } }`. */
export function expectStorageError(response: ErrorAnswer, status: number, code: string, message?: RegExp): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) } },
  });
  if (message) expect((response.body as { error: { message: string } }).error.message).toMatch(message);
}

/** Any other error (flags, quota, audit, admin): `{ statusCode, error, message }`. */
export function expectApiError(response: ErrorAnswer, status: number, code: string, message?: RegExp): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { statusCode: status, error: code, message: expect.any(String) },
  });
  if (message) expect((response.body as { message: string }).message).toMatch(message);
}
