import { useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import type { components } from '../../.generated/api';
import { Layout } from '../components/Layout';

type Payload = components['schemas']['ConfigPayloadDto'];

/** What game servers receive (GET /v1/flags/config and its ETag), and what a server may relay to players. */
export function ServedConfig() {
  const [payload, setPayload] = useState<Payload | null>(null);
  const [etag, setEtag] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      const answer = await api.GET('/v1/flags/config');
      setEtag(answer.response.headers.get('ETag'));
      setPayload(await ok(Promise.resolve(answer)));
    } catch (error) {
      setProblem((error as ApiProblem).explain());
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  useOrganizationEvents((event) => {
    if (event.type === 'flags') void load();
  });

  const shared = payload ? Object.fromEntries(payload.flags.filter((flag) => flag.runtime === 'shared').map((flag) => [flag.key, flag.value])) : {};
  const targeted = payload?.flags.filter((flag) => flag.runtime === 'shared' && flag.rules?.length) ?? [];
  return (
    <Layout title="What servers receive">
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {payload && (
        <>
          <section aria-labelledby="payload-title">
            <h2 id="payload-title">The config payload</h2>
            <p>
              Game servers poll <code>GET /v1/flags/config</code> with <code>If-None-Match</code>; this payload's ETag is <code>{etag}</code>. It
              holds {payload.flags.length} flags (archived ones are left out).
            </p>
            <pre className="code-block" tabIndex={0} aria-label="Payload as JSON">
              {JSON.stringify(payload, null, 2)}
            </pre>
          </section>
          <section aria-labelledby="shared-title">
            <h2 id="shared-title">What may be relayed to players</h2>
            <p>Only the shared flags, as a server's SDK gives them with clientSafe(): server flags never leave the server.</p>
            {targeted.length > 0 && (
              <p className="notice">
                {targeted.map((flag) => flag.key).join(', ')} {targeted.length === 1 ? 'has' : 'have'} targeting rules: each player gets the value
                their attributes select (shown here: the default).
              </p>
            )}
            <pre className="code-block" tabIndex={0} aria-label="Shared flags as JSON">
              {JSON.stringify(shared, null, 2)}
            </pre>
          </section>
        </>
      )}
    </Layout>
  );
}
