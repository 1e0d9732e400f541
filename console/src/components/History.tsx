import { useCallback, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { useActors } from '../lib/actors';
import { diff, shown } from '../lib/diff';
import { useSignedIn } from '../session';
import { Pager } from './Pager';

type Entry = components['schemas']['FeatureFlagAuditEntryDto'];

const ACTIONS: Record<string, string> = {
  'flag.create': 'created',
  'flag.update': 'renamed or described',
  'flag.value.set': 'changed the value',
  'flag.runtime.set': 'changed the runtime',
  'flag.archive': 'archived',
  'flag.unarchive': 'unarchived',
  'flag.delete': 'deleted',
};

/** A flag's history, newest first: who did what, the difference each change made, and a way back to any state. */
export function History({ flagId, onRestored }: { flagId: string; onRestored: () => void }) {
  const session = useSignedIn();
  const actors = useActors(session.organization?.id);
  const [page, setPage] = useState(1);
  const read = useCallback(() => ok(api.GET('/v1/flags/audit', { params: { query: { flagId, page, limit: 10 } } })), [flagId, page]);
  const { data: answer, problem: readProblem, reload: load } = useLatestRead(read);
  const entries = answer?.results ?? [];
  const [restoreProblem, setRestoreProblem] = useState<string | null>(null);
  const problem = restoreProblem ?? readProblem?.explain();
  useOrganizationEvents((event) => {
    if (event.type === 'flags' && event.flagIds.includes(flagId)) void load();
  });

  const restore = async (entry: Entry) => {
    setRestoreProblem(null);
    try {
      await ok(api.POST('/v1/flags/{flagId}/restore', { params: { path: { flagId } }, body: { auditEntryId: entry.id } }));
      onRestored();
      await load();
    } catch (error) {
      setRestoreProblem((error as ApiProblem).explain());
    }
  };

  return (
    <section aria-labelledby="history-title" className="history">
      <h2 id="history-title">History</h2>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <ol className="timeline">
        {entries.map((entry) => {
          const changes = diff(entry.before ?? {}, entry.after ?? {});
          const when = new Date(entry.createdAt);
          return (
            <li key={entry.id}>
              <p>
                <strong>{actors.name(entry.actorType, entry.actorId)}</strong> {ACTIONS[entry.action] ?? entry.action}{' '}
                <time dateTime={entry.createdAt}>{when.toLocaleString()}</time>
              </p>
              {entry.before && entry.after && changes.length > 0 && (
                <table className="diff">
                  <caption className="visually-hidden">What changed</caption>
                  <thead>
                    <tr>
                      <th scope="col">Field</th>
                      <th scope="col">Before</th>
                      <th scope="col">After</th>
                    </tr>
                  </thead>
                  <tbody>
                    {changes.map((change) => (
                      <tr key={change.path}>
                        <th scope="row">{change.path}</th>
                        <td>
                          <del>{shown(change.before)}</del>
                        </td>
                        <td>
                          <ins>{shown(change.after)}</ins>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              {entry.after && session.canWrite && (
                <button type="button" onClick={() => void restore(entry)}>
                  Restore this version<span className="visually-hidden"> (after the change of {when.toLocaleString()})</span>
                </button>
              )}
            </li>
          );
        })}
      </ol>
      {answer && (
        <Pager
          page={answer.page}
          totalPages={answer.totalPages}
          onPage={setPage}
          label="History pages"
          previous="Newer changes"
          next="Older changes"
        />
      )}
    </section>
  );
}
