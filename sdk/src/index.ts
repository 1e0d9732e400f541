export { FlagstoreClient } from './client';
export type { FlagstoreClientEvents, FlagstoreClientOptions } from './client';
export { FlagstoreError } from './errors';
export type { FlagstoreErrorKind } from './errors';
export type { Fetch } from './http';
export type { ConfigPayload, Flag, FlagType, JsonValue } from './payload';
export { systemScheduler } from './timing';
export type { Scheduler } from './timing';
export type { Evaluation, EvaluationContext, EvaluationReason, FlagRule, RuleCondition } from './targeting';
