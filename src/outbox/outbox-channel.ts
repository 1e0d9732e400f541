import { RetryPolicy } from './retry-policy';

/** One row being delivered, as the channel's sender sees it. */
export interface OutboxDelivery<Payload> {
  id: string;
  payload: Payload;
  /** This attempt's number, from 1. */
  attempt: number;
  createdAt: Date;
}

/**
 * A kind of thing the outbox delivers (`mail`, `webhook`): registered once by its module
 * (`Outbox.register`, from a constructor), on every instance that may deliver it. An instance claims only rows of
 * the channels registered on it.
 */
export interface OutboxChannel<Payload = unknown> {
  /** As stored in `outbox.channel`: a lowercase letter, then lowercase letters, digits or `-` (at most 32). */
  readonly name: string;
  readonly retry: RetryPolicy;
  /**
   * How long one attempt may take before it counts as failed. A claimed row is leased for twice this: when the
   * instance sending it dies, another takes it once the lease has run out.
   */
  readonly attemptTimeoutMs: number;
  /**
   * Delivers the row, resolving once the far side has taken it; rejects to have it retried by `retry`, or with a
   * `PermanentDeliveryError` to give up at once. The row may have been delivered before (at least once): whatever
   * the far side can do to recognise a repeat (the row's id) is up to the channel. Resolves `skipped` when there is
   * no longer anything to send it to (a webhook endpoint disabled or deleted since the row was written).
   */
  send(delivery: OutboxDelivery<Payload>, signal: AbortSignal): Promise<void | 'skipped'>;
  /**
   * Called once a row is given up (its last attempt failed, or a permanent failure), after that is recorded: a
   * webhook endpoint is disabled. A failure here is logged; the row stays failed.
   */
  givenUp?(delivery: OutboxDelivery<Payload>, error: string): Promise<void>;
  /**
   * What is kept of the payload once the row is settled (delivered or given up); unset: all of it. A mail's body
   * may hold a single-use link, which has no business staying in the table after it went out.
   */
  settledPayload?(payload: Payload): unknown;
  /** The text recorded as `last_error` and logged for a failed attempt: it must hold no secret. */
  describeError?(error: unknown): string;
}

/** A failure that retrying would only repeat (a recipient the server refuses): the row fails at once. */
export class PermanentDeliveryError extends Error {}
