import { createHash } from 'node:crypto';
import { HttpStatus } from '@nestjs/common';
import { canonicalJson } from '../../common/canonical-json';
import { DomainError } from '../../common/domain-error';
import { OfrepFlagKey } from '../../http/error-response';
import { ConfigEntry } from '../../flags/flags.repository';
import { evaluateFlag, EvaluationContext, EvaluationReason, matchingRuleIndex, outcomeOf } from '../../flags/targeting/evaluate-flag';
import { ConfigPayload } from '../config-payload';

export interface OfrepEvaluation {
  key: string;
  value: unknown;
  /** STATIC for a flag without rules; TARGETING_MATCH or SPLIT (a rule matched), DEFAULT (none did) for one with rules. */
  reason: EvaluationReason;
  /** The matching rule's id, or `default`. */
  variant: string;
  metadata: { type: ConfigEntry['type']; runtime: ConfigEntry['runtime'] };
}

/** A flag evaluated for a context, by the service's one evaluator (flags/targeting/evaluate-flag.ts). */
export function evaluationOf(entry: ConfigEntry, context: EvaluationContext): OfrepEvaluation {
  const { value, reason, variant } = evaluateFlag(entry, context);
  return { key: entry.key, value, reason, variant, metadata: { type: entry.type, runtime: entry.runtime } };
}

/** A flag with rules, and its evaluation serialised for each outcome: rule i at [i], none matching last. */
interface TargetedPart {
  entry: ConfigEntry;
  outcomes: string[];
}

interface Evaluations {
  /**
   * Each flag's evaluation serialised once per payload: the one answer of a flag without rules, each possible answer of
   * one with rules (a request then only picks the matching rule).
   */
  parts: (string | TargetedPart)[];
  byKey: Map<string, ConfigEntry>;
  /** The whole bulk `flags` array, when no flag has rules. */
  flagsJson: string | undefined;
}

const evaluations = new WeakMap<ConfigPayload, Evaluations>();

/** The payload's flags prepared for OFREP, built on first use and kept as long as the payload is. */
function evaluationsOf(payload: ConfigPayload): Evaluations {
  let built = evaluations.get(payload);
  if (!built) {
    const parts = payload.entries.map((entry) => (entry.rules ? targetedPart(entry) : JSON.stringify(evaluationOf(entry, {}))));
    built = {
      parts,
      byKey: new Map(payload.entries.map((entry) => [entry.key, entry])),
      flagsJson: payload.targeted ? undefined : `[${parts.join(',')}]`,
    };
    evaluations.set(payload, built);
  }
  return built;
}

function targetedPart(entry: ConfigEntry): TargetedPart {
  const metadata = { type: entry.type, runtime: entry.runtime };
  const serialised = (index: number) => JSON.stringify({ key: entry.key, ...outcomeOf(entry, index), metadata });
  return { entry, outcomes: [...entry.rules!.map((_rule, index) => serialised(index)), serialised(-1)] };
}

/** The bulk answer's `flags` array for a context: serialised once per payload while no flag has rules. */
export function bulkFlagsJson(payload: ConfigPayload, context: EvaluationContext): string {
  const { parts, flagsJson } = evaluationsOf(payload);
  if (flagsJson !== undefined) return flagsJson;
  let json = '[';
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index];
    if (index > 0) json += ',';
    json += typeof part === 'string' ? part : part.outcomes.at(matchingRuleIndex(part.entry, context))!;
  }
  return `${json}]`;
}

/** One flag of the payload, or undefined when it has no such (non-archived) flag. */
export function payloadEntry(payload: ConfigPayload, key: string): ConfigEntry | undefined {
  return evaluationsOf(payload).byKey.get(key);
}

/**
 * The bulk answer's validator: the config ETag while no flag has rules; otherwise a hash of it and the context, so a
 * client whose context changed never gets a 304 for its old context's values.
 */
export function bulkEtag(payload: ConfigPayload, context: EvaluationContext): string {
  if (!payload.targeted) return payload.etag;
  return createHash('sha256')
    .update(`${payload.etag}\n${canonicalJson(context)}`)
    .digest('base64url')
    .slice(0, 32);
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

/** The request body's context: `{context: {...}}`, which must be a JSON object; it selects values through rules. */
export function evaluationContext(body: unknown): EvaluationContext {
  const context = isObject(body) ? body.context : undefined;
  if (!isObject(context)) {
    throw new OfrepError(
      HttpStatus.BAD_REQUEST,
      'INVALID_CONTEXT',
      'context must be a JSON object, such as {"context": {"targetingKey": "server-1"}}',
    );
  }
  return context;
}

export function flagNotFound(key: string): OfrepError {
  return new OfrepError(HttpStatus.NOT_FOUND, 'FLAG_NOT_FOUND', `Flag "${key}" was not found (or is archived)`, key);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
