import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../../common/domain-error';
import { OfrepFlagKey } from '../../http/error-response';
import { ConfigEntry } from '../../flags/flags.repository';
import { ConfigPayload } from '../config-payload';

/** A flag here has one value for everyone: the evaluation is always STATIC, of the one `default` variant. */
export const OFREP_REASON = 'STATIC';
export const OFREP_VARIANT = 'default';

export interface OfrepEvaluation {
  key: string;
  value: unknown;
  reason: typeof OFREP_REASON;
  variant: typeof OFREP_VARIANT;
  metadata: { type: ConfigEntry['type']; runtime: ConfigEntry['runtime'] };
}

export function evaluationOf(entry: ConfigEntry): OfrepEvaluation {
  return { key: entry.key, value: entry.value, reason: OFREP_REASON, variant: OFREP_VARIANT, metadata: { type: entry.type, runtime: entry.runtime } };
}

interface Evaluations {
  /** The bulk answer's `flags` array, serialised once per payload. */
  flagsJson: string;
  byKey: Map<string, ConfigEntry>;
}

const evaluations = new WeakMap<ConfigPayload, Evaluations>();

/** The payload's flags as OFREP evaluations, built on first use and kept as long as the payload is. */
export function evaluationsOf(payload: ConfigPayload): Evaluations {
  let built = evaluations.get(payload);
  if (!built) {
    built = {
      flagsJson: JSON.stringify(payload.entries.map(evaluationOf)),
      byKey: new Map(payload.entries.map((entry) => [entry.key, entry])),
    };
    evaluations.set(payload, built);
  }
  return built;
}

/** OFREP's own failures: answered as `{key?, errorCode, errorDetails}` (see writeApiError's OFREP shape). */
export class OfrepError extends DomainError implements OfrepFlagKey {
  constructor(
    status: HttpStatus,
    code: 'INVALID_CONTEXT' | 'FLAG_NOT_FOUND',
    message: string,
    readonly ofrepKey?: string,
  ) {
    super(status, code, message);
  }
}

/** The request body: `{context: {...}}`. The context selects nothing (flags have one value) but must be an object. */
export function checkEvaluationRequest(body: unknown): void {
  const context = isObject(body) ? body.context : undefined;
  if (!isObject(context)) {
    throw new OfrepError(
      HttpStatus.BAD_REQUEST,
      'INVALID_CONTEXT',
      'context must be a JSON object, such as {"context": {"targetingKey": "server-1"}}',
    );
  }
}

export function flagNotFound(key: string): OfrepError {
  return new OfrepError(HttpStatus.NOT_FOUND, 'FLAG_NOT_FOUND', `Flag "${key}" was not found (or is archived)`, key);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
