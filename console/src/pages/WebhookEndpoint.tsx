import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { FormError } from '../components/Field';
import { Layout } from '../components/Layout';
import { WebhookAdminsOnly } from '../components/WebhookAdminsOnly';
import { announceOnNextPage } from '../components/page-notice';
import { WebhookDeliveries } from '../components/WebhookDeliveries';
import { type WebhookFields, WebhookForm } from '../components/WebhookForm';
import { formatLabel, shortUrl, type WebhookEndpoint } from '../lib/webhooks';
import { Link, navigate } from '../router';
import { EndpointState } from './Webhooks';

type Rotated = components['schemas']['RotatedWebhookSecretDto'];

/**
 * When the page reads the endpoint and its deliveries again after it queued something (a test, a redelivery) or the
 * organization changed something an endpoint may hear of: the first attempt goes out within about 250 ms, and a
 * failed one is retried after about 5 s, so the last read shows that retry too. Nothing new is asked of the server.
 */
const REFRESH_AFTER_MS = [400, 1_200, 3_000, 6_500];

/** One webhook endpoint (admins): its state and actions, its deliveries, and its settings. */
export function WebhookEndpointPage({ id }: { id: string }) {
  return (
    <WebhookAdminsOnly title="Webhook endpoint">
      <EndpointPage id={id} />
    </WebhookAdminsOnly>
  );
}

function EndpointPage({ id }: { id: string }) {
  const readEndpoint = useCallback(() => ok(api.GET('/v1/organization/webhooks/{webhookId}', { params: { path: { webhookId: id } } })), [id]);
  const { data: endpoint, problem: endpointProblem, reload: reloadEndpoint } = useLatestRead(readEndpoint);
  const [page, setPage] = useState(1);
  const readDeliveries = useCallback(
    () => ok(api.GET('/v1/organization/webhooks/{webhookId}/deliveries', { params: { path: { webhookId: id }, query: { page, limit: 20 } } })),
    [id, page],
  );
  const { data: deliveries, reload: reloadDeliveries } = useLatestRead(readDeliveries);
  const refresh = useCallback(() => void Promise.all([reloadEndpoint(), reloadDeliveries()]), [reloadEndpoint, reloadDeliveries]);
  const refreshSoon = useRefreshes(refresh);
  // Any change in the organization may be an event for this endpoint.
  useOrganizationEvents(() => refreshSoon());

  const [said, setSaid] = useState<string | null>(null);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const queued = (what: string) => {
    setSaid(what);
    refreshSoon();
  };

  if (!endpoint) {
    return (
      <Layout title="Webhook endpoint">
        {endpointProblem ? (
          <p className="error" role="alert">
            {endpointProblem.status === 404 ? 'There is no such endpoint in this organization.' : endpointProblem.explain()}{' '}
            <Link to="/webhooks">All webhooks</Link>
          </p>
        ) : (
          <p className="loading">Loading…</p>
        )}
      </Layout>
    );
  }

  const act = async (call: () => Promise<unknown>, done?: string) => {
    setProblem(null);
    setSaid(null);
    try {
      await call();
      if (done) setSaid(done);
      refresh();
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  return (
    <Layout title={endpoint.description || shortUrl(endpoint.url)}>
      <p>
        <Link to="/webhooks">All webhooks</Link>
      </p>
      <Overview endpoint={endpoint} />
      <Actions endpoint={endpoint} act={act} onQueued={queued} />
      <FormError message={problem?.explain()} />
      {said && (
        <p className="notice" role="status">
          {said}
        </p>
      )}
      <WebhookDeliveries
        endpointId={endpoint.id}
        deliveries={deliveries}
        enabled={endpoint.enabled}
        page={page}
        onPage={setPage}
        onRefresh={refresh}
        onQueued={queued}
      />
      <Settings key={endpoint.updatedAt} endpoint={endpoint} onSaved={refresh} />
      <DeleteEndpoint endpoint={endpoint} />
    </Layout>
  );
}

/** Reads again now and at REFRESH_AFTER_MS from the last call (a new burst replaces one under way). */
function useRefreshes(refresh: () => void): () => void {
  const timers = useRef<number[]>([]);
  const current = useRef(refresh);
  current.current = refresh;
  useEffect(() => () => timers.current.forEach((timer) => window.clearTimeout(timer)), []);
  return useCallback(() => {
    timers.current.forEach((timer) => window.clearTimeout(timer));
    timers.current = REFRESH_AFTER_MS.map((delay) => window.setTimeout(() => current.current(), delay));
  }, []);
}

function Overview({ endpoint }: { endpoint: WebhookEndpoint }) {
  const rotating = endpoint.previousSecretExpiresAt !== null && Date.parse(endpoint.previousSecretExpiresAt) > Date.now();
  return (
    <>
      <dl className="invitation-facts">
        <dt>URL</dt>
        <dd>
          <code className="link">{endpoint.url}</code>
        </dd>
        <dt>Format</dt>
        <dd>{formatLabel(endpoint.format)}</dd>
        <dt>Events</dt>
        <dd>{endpoint.events.join(', ')}</dd>
        <dt>Flags</dt>
        <dd>{endpoint.flagKeys ? endpoint.flagKeys.join(', ') : 'every flag'}</dd>
        <dt>State</dt>
        <dd>
          <EndpointState endpoint={endpoint} />
        </dd>
      </dl>
      {!endpoint.enabled && (
        <div className="notice warning" role="status">
          <p>
            <strong>{endpoint.disabledReason ?? 'Disabled'}</strong>
            {endpoint.disabledAt && ` (${new Date(endpoint.disabledAt).toLocaleString()})`}.
          </p>
          <p>Its events are recorded as skipped until it is enabled again; any of the last 7 days can then be redelivered.</p>
        </div>
      )}
      {rotating && (
        <p className="meta">The previous secret also signs deliveries until {new Date(endpoint.previousSecretExpiresAt!).toLocaleString()}.</p>
      )}
    </>
  );
}

function Actions({
  endpoint,
  act,
  onQueued,
}: {
  endpoint: WebhookEndpoint;
  act: (call: () => Promise<unknown>, done?: string) => Promise<void>;
  onQueued: (what: string) => void;
}) {
  const [confirming, setConfirming] = useState<'disable' | 'rotate' | null>(null);
  const [rotated, setRotated] = useState<Rotated | null>(null);
  const path = { params: { path: { webhookId: endpoint.id } } };
  const setEnabled = (enabled: boolean) =>
    act(
      () => ok(api.PATCH('/v1/organization/webhooks/{webhookId}', { ...path, body: { enabled } })),
      enabled ? 'Enabled: deliveries start from the next event.' : 'Disabled: its events are recorded as skipped until it is enabled again.',
    );
  const test = () =>
    act(async () => {
      const { eventId } = await ok(api.POST('/v1/organization/webhooks/{webhookId}/test', path));
      onQueued(`Test event ${eventId} queued.`);
    });
  const rotate = () => act(async () => setRotated(await ok(api.POST('/v1/organization/webhooks/{webhookId}/rotate-secret', path))));

  return (
    <section aria-labelledby="actions-title">
      <h2 id="actions-title" className="visually-hidden">
        Actions
      </h2>
      <div className="actions">
        <button type="button" disabled={!endpoint.enabled} onClick={() => void test()}>
          Send test event
        </button>
        {endpoint.enabled ? (
          <button type="button" onClick={() => setConfirming('disable')}>
            Disable
          </button>
        ) : (
          <button type="button" className="primary" onClick={() => void setEnabled(true)}>
            Enable
          </button>
        )}
        <button type="button" onClick={() => setConfirming('rotate')}>
          Rotate secret
        </button>
      </div>
      {!endpoint.enabled && <p className="help">Enable the endpoint to send a test event or redeliver.</p>}
      {rotated && (
        <section className="notice secret" aria-labelledby="rotated-title">
          <h2 id="rotated-title">New signing secret</h2>
          <p>
            <code className="link">{rotated.secret}</code>
          </p>
          <p>
            Copy it now: it will not be shown again. The old secret keeps signing too, beside this one, for 24 hours (until{' '}
            {new Date(rotated.previousSecretExpiresAt).toLocaleString()}), so receivers can switch.
          </p>
          <CopyButton text={rotated.secret} label="Copy the new secret" detail={`of ${shortUrl(endpoint.url)}`} />
        </section>
      )}
      <ConfirmDialog
        open={confirming === 'disable'}
        title="Disable this endpoint?"
        confirm="Disable endpoint"
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          setConfirming(null);
          void setEnabled(false);
        }}
      >
        <p>
          Nothing is sent to it while it is disabled: its events, and those waiting for it now, are recorded as skipped until it is enabled again.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming === 'rotate'}
        title="Rotate the signing secret?"
        confirm="Rotate secret"
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          setConfirming(null);
          void rotate();
        }}
      >
        <p>A new secret is made and shown once. For 24 hours every delivery is signed with both, the old and the new, so receivers can switch.</p>
      </ConfirmDialog>
    </section>
  );
}

function Settings({ endpoint, onSaved }: { endpoint: WebhookEndpoint; onSaved: () => void }) {
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const save = async (fields: WebhookFields) => {
    setBusy(true);
    setProblem(null);
    setSaved(false);
    try {
      await ok(api.PATCH('/v1/organization/webhooks/{webhookId}', { params: { path: { webhookId: endpoint.id } }, body: fields }));
      setSaved(true);
      onSaved();
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <WebhookForm initial={endpoint} submitLabel="Save endpoint" problem={problem} busy={busy} onSave={(fields) => void save(fields)} />
      {saved && (
        <p className="saved" role="status">
          Saved.
        </p>
      )}
    </section>
  );
}

function DeleteEndpoint({ endpoint }: { endpoint: WebhookEndpoint }) {
  const [confirming, setConfirming] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const remove = async () => {
    setProblem(null);
    try {
      await ok(api.DELETE('/v1/organization/webhooks/{webhookId}', { params: { path: { webhookId: endpoint.id } } }));
      announceOnNextPage(`Deleted the endpoint ${shortUrl(endpoint.url)}.`);
      navigate('/webhooks');
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };
  return (
    <section aria-labelledby="delete-title">
      <h2 id="delete-title">Delete</h2>
      <p>Deleting the endpoint drops its deliveries too, sent or waiting.</p>
      <FormError message={problem?.explain()} />
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete endpoint
      </button>
      <ConfirmDialog
        open={confirming}
        title="Delete this endpoint?"
        confirm="Delete endpoint"
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false);
          void remove();
        }}
      >
        <p>Nothing more is sent to {shortUrl(endpoint.url)}, and its deliveries are gone with it.</p>
      </ConfirmDialog>
    </section>
  );
}
