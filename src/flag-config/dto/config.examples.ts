import { OfrepBulkEvaluationDto, OfrepEvaluationDto } from '../ofrep/ofrep.dto';
import { ConfigPayloadDto } from './config-payload.dto';

/** What the config and OFREP documentation shows: two flags in the real shapes (the OpenAPI test holds them to their schemas). */

export const CONFIG_PAYLOAD_EXAMPLE: ConfigPayloadDto = {
  etag: 'Yk3v0Qz1pR8mT2wX6cN4sL9dF7hJ5gB0',
  generatedAt: '2026-11-27T18:00:00.418Z',
  pollIntervalSeconds: 20,
  flags: [
    { key: 'double-xp-weekend', type: 'boolean', value: true, runtime: 'shared' },
    { key: 'loot-table', type: 'json', value: { common: 0.7, rare: 0.25, legendary: 0.05 }, runtime: 'server' },
  ],
};

export const OFREP_EVALUATION_EXAMPLE: OfrepEvaluationDto = {
  key: 'double-xp-weekend',
  value: true,
  reason: 'STATIC',
  variant: 'default',
  metadata: { type: 'boolean', runtime: 'shared' },
};

export const OFREP_BULK_EXAMPLE: OfrepBulkEvaluationDto = {
  flags: [
    OFREP_EVALUATION_EXAMPLE,
    {
      key: 'loot-table',
      value: { common: 0.7, rare: 0.25, legendary: 0.05 },
      reason: 'STATIC',
      variant: 'default',
      metadata: { type: 'json', runtime: 'server' },
    },
  ],
  eventStreams: [{ type: 'sse', url: 'https://flags.example.com/v1/flags/config/stream?token=EXAMPLE.token', inactivityDelaySec: 120 }],
};

export const OFREP_REQUEST_EXAMPLES = {
  server: { summary: 'A game server', value: { context: { targetingKey: 'server-eu-1' } } },
  empty: { summary: 'An empty context (it must still be an object)', value: { context: {} } },
};
