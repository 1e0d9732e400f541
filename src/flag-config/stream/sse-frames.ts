import type { ConfigPayload } from '../config-payload';

/** The one event of a payload: OFREP's refetchEvaluation, with the ETag as its id. */
export function eventFrame(payload: Pick<ConfigPayload, 'etag' | 'builtAt'>): Buffer {
  const data = JSON.stringify({ type: 'refetchEvaluation', etag: payload.etag, lastModified: Math.floor(payload.builtAt / 1000) });
  return Buffer.from(`id: ${payload.etag}\nevent: message\ndata: ${data}\n\n`);
}
