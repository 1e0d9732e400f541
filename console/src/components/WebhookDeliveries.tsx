import { useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { redeliverable, type WebhookDelivery } from '../lib/webhooks';
import { FormError } from './Field';
import { Pager } from './Pager';

type DeliveryPage = components['schemas']['WebhookDeliveryPageDto'];

const STATUS_TEXT: Record<WebhookDelivery['status'], string> = {
  pending: 'pending',
  succeeded: 'succeeded',
  failed: 'failed',
  skipped: 'skipped',
};

/**
 * An endpoint's deliveries of the last 7 days, newest first: each attempt with its status, the code answered, how
 * long it took and when, the answer's first 1 KB or why there was none (expandable), and "Redeliver" on each event.
 */
export function WebhookDeliveries({
  endpointId,
  deliveries,
  enabled,
  page,
  onPage,
  onRefresh,
  onQueued,
}: {
  endpointId: string;
  deliveries: DeliveryPage | null;
  enabled: boolean;
  page: number;
  onPage: (page: number) => void;
  onRefresh: () => void;
  /** An event was queued again: the page reads the deliveries a few times to show its attempt. */
  onQueued: (what: string) => void;
}) {
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const lines = deliveries?.results ?? [];
  const offered = redeliverable(lines);

  const redeliver = async (line: WebhookDelivery) => {
    setProblem(null);
    try {
      await ok(
        api.POST('/v1/organization/webhooks/{webhookId}/deliveries/{eventId}/redeliver', {
          params: { path: { webhookId: endpointId, eventId: line.eventId } },
        }),
      );
      onQueued(`Redelivery of ${line.eventId} queued.`);
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  return (
    <section aria-labelledby="deliveries-title" className="deliveries">
      <h2 id="deliveries-title">Deliveries</h2>
      <p className="toolbar">
        <span className="meta">The last 7 days, newest first{deliveries ? ` (${deliveries.total})` : ''}.</span>
        <button type="button" onClick={onRefresh}>
          Refresh deliveries
        </button>
      </p>
      <FormError message={problem?.explain()} />
      {deliveries && lines.length === 0 ? (
        <p>No deliveries in the last 7 days.</p>
      ) : (
        <table className="flags deliveries-table">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">Response</th>
              <th scope="col">Duration</th>
              <th scope="col">Time</th>
              <th scope="col">
                <span className="visually-hidden">Redeliver</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {lines.map((line) => (
              <tr key={`${line.eventId}-${line.attempt}-${line.status}`} className={`delivery-line status-${line.status}`}>
                <td>
                  <code>{line.type}</code>
                  <div className="meta">
                    <code>{line.eventId}</code>
                  </div>
                  <Details line={line} />
                </td>
                <td>{line.attempt > 0 ? line.attempt : '–'}</td>
                <td>
                  <span className={`delivery-status status-${line.status}`}>{STATUS_TEXT[line.status]}</span>
                </td>
                <td>{line.responseStatus ?? '–'}</td>
                <td>{line.durationMs !== null ? `${line.durationMs} ms` : '–'}</td>
                <td>
                  <time dateTime={line.at} title={line.status === 'pending' ? 'Next attempt due' : undefined}>
                    {line.status === 'pending' ? 'due ' : ''}
                    {new Date(line.at).toLocaleString()}
                  </time>
                </td>
                <td>
                  {offered.has(line) && (
                    <button
                      type="button"
                      disabled={!enabled}
                      title={enabled ? undefined : 'Enable the endpoint first'}
                      onClick={() => void redeliver(line)}
                    >
                      Redeliver<span className="visually-hidden"> {line.eventId}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deliveries && (
        <Pager
          page={page}
          totalPages={deliveries.totalPages}
          onPage={onPage}
          label="Pages of deliveries"
          previous="Newer deliveries"
          next="Older deliveries"
        />
      )}
    </section>
  );
}

/** The answer's first 1 KB, or why there was none: folded, as they can be long. */
function Details({ line }: { line: WebhookDelivery }) {
  if (line.responseExcerpt === null && line.error === null) return null;
  return (
    <details className="delivery-details">
      <summary>{line.error !== null ? 'Error' : 'Answer'}</summary>
      {line.error !== null && <p className="error">{line.error}</p>}
      {line.responseExcerpt !== null && <pre className="code-block">{line.responseExcerpt || '(empty)'}</pre>}
    </details>
  );
}
