import { useCallback, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { CopyButton } from '../components/CopyButton';
import { Layout } from '../components/Layout';
import { WebhookAdminsOnly } from '../components/WebhookAdminsOnly';
import { type WebhookFields, WebhookForm } from '../components/WebhookForm';
import { formatLabel, shortUrl, type WebhookEndpoint } from '../lib/webhooks';
import { Link } from '../router';

type CreatedEndpoint = components['schemas']['CreatedWebhookEndpointDto'];

/**
 * The organization's webhook endpoints (decisions.md, "Webhooks (turn 5)"), for admins: each with where it points,
 * what it sends, whether it is enabled (and, when not, why), and its last delivery; and the form that adds one, whose
 * signing secret is shown here once.
 */
export function Webhooks() {
  return (
    <WebhookAdminsOnly title="Webhooks">
      <WebhookList />
    </WebhookAdminsOnly>
  );
}

function WebhookList() {
  const read = useCallback(() => ok(api.GET('/v1/organization/webhooks')), []);
  const { data, problem: readProblem, reload } = useLatestRead(read);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedEndpoint | null>(null);
  // A new form after each endpoint made: the next starts empty.
  const [formKey, setFormKey] = useState(0);

  const create = async (fields: WebhookFields) => {
    setBusy(true);
    setProblem(null);
    try {
      setCreated(await ok(api.POST('/v1/organization/webhooks', { body: fields })));
      setFormKey((key) => key + 1);
      await reload();
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  const endpoints = data?.results ?? [];
  return (
    <Layout title="Webhooks">
      <p className="meta">Each change an endpoint subscribes to is POSTed to it, in order, at least once; failures are retried for about 28 hours.</p>
      {readProblem && (
        <p className="error" role="alert">
          {readProblem.explain()}
        </p>
      )}
      {created && <SecretPanel created={created} />}
      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        {data && endpoints.length === 0 ? (
          <p>No endpoints yet: add one below.</p>
        ) : (
          <table className="flags">
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Format</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Last delivery</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td>
                    <Link to={`/webhooks/${endpoint.id}`}>{shortUrl(endpoint.url)}</Link>
                    {endpoint.description && <div className="meta">{endpoint.description}</div>}
                  </td>
                  <td>{formatLabel(endpoint.format)}</td>
                  <td>
                    <EventList endpoint={endpoint} />
                  </td>
                  <td>
                    <EndpointState endpoint={endpoint} />
                  </td>
                  <td>
                    <LastDelivery endpoint={endpoint} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="new-endpoint-title">
        <h2 id="new-endpoint-title">New endpoint</h2>
        <WebhookForm key={formKey} submitLabel="Add endpoint" problem={problem} busy={busy} onSave={(fields) => void create(fields)} />
      </section>
    </Layout>
  );
}

/** The new endpoint's signing secret, this once: the service never shows it again. */
function SecretPanel({ created }: { created: CreatedEndpoint }) {
  return (
    <section className="notice secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret of {shortUrl(created.url)}</h2>
      <p>
        <code className="link">{created.secret}</code>
      </p>
      <p>
        Copy it now: it will not be shown again. Receivers verify each delivery’s <code>webhook-signature</code> with it (Standard Webhooks); if it is
        lost, rotate it on the <Link to={`/webhooks/${created.id}`}>endpoint’s page</Link>.
      </p>
      <CopyButton text={created.secret} label="Copy the secret" detail={`of ${shortUrl(created.url)}`} />
    </section>
  );
}

function EventList({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <>
      {endpoint.events.map((type, index) => (
        <span key={type} className="nowrap">
          {type}
          {index < endpoint.events.length - 1 ? ', ' : ''}
        </span>
      ))}
      {endpoint.flagKeys && <div className="meta">only {endpoint.flagKeys.join(', ')}</div>}
    </>
  );
}

/** Enabled, or disabled with the reason (a 410, the last failed retry, or who disabled it) in plain sight. */
export function EndpointState({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.enabled) return <span className="state state-enabled">Enabled</span>;
  return (
    <span className="state state-disabled">
      {/* The reason says "Disabled" itself: "Disabled by Maya", "Disabled: the endpoint answered 410 Gone". */}
      <strong>{endpoint.disabledReason ?? 'Disabled'}</strong>
    </span>
  );
}

function LastDelivery({ endpoint }: { endpoint: WebhookEndpoint }) {
  const last = endpoint.lastDelivery;
  if (!last) return <span className="meta">none yet</span>;
  return (
    <>
      <span className={`delivery-status status-${last.status}`}>{last.status}</span>
      {last.responseStatus !== null && ` ${last.responseStatus}`}
      <div className="meta">
        <time dateTime={last.at}>{new Date(last.at).toLocaleString()}</time>
      </div>
    </>
  );
}
