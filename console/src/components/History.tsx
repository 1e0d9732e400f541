import { type ReactNode, useCallback, useState } from 'react';
import { api, ApiProblem, type FlagWrite, ok, okVersioned } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { useActors } from '../lib/actors';
import { diff, same, shown } from '../lib/diff';
import { describeRule, type Rule, rulesChange } from '../lib/rules';
import { useSignedIn } from '../session';
import { ConfirmDialog } from './ConfirmDialog';
import { Pager } from './Pager';

type Entry = components['schemas']['FeatureFlagAuditEntryDto'];
type Flag = components['schemas']['FeatureFlagDto'];
type Snapshot = components['schemas']['FlagSnapshotDto'];

const ACTIONS: Record<string, string> = {
  'flag.create': 'created',
  'flag.update': 'renamed or described',
  'flag.value.set': 'changed the value',
  'flag.runtime.set': 'changed the runtime',
  'flag.archive': 'archived',
  'flag.unarchive': 'unarchived',
  'flag.delete': 'deleted',
};

/** A flag's state without its rules, which are shown rule by rule instead of as JSON. */
function withoutRules(state: Snapshot | Flag | null | undefined): Record<string, unknown> {
  if (!state) return {};
  const { rules: _rules, ...rest } = state as Snapshot;
  return rest;
}

/** Rules as the rules editor reads them, one per line; "none" for a flag without rules. */
function RuleList({ rules }: { rules: readonly Rule[] | null | undefined }) {
  if (!rules || rules.length === 0) return <>none</>;
  return (
    <ol className="rule-list">
      {rules.map((rule) => (
        <li key={rule.id}>{describeRule(rule)}</li>
      ))}
    </ol>
  );
}

/** What restoring `after` over the flag as it is (`now`) changes, as lines a person reads before confirming. */
function RestorePreview({ now, after }: { now: Flag; after: Snapshot }) {
  const lines: ReactNode[] = [];
  const was = withoutRules(now);
  const becomes = withoutRules(after);
  for (const [field, label] of [
    ['value', 'Value'],
    ['type', 'Type'],
    ['runtime', 'Runtime'],
    ['name', 'Name'],
    ['description', 'Description'],
  ] as const) {
    if (!same(was[field] ?? null, becomes[field] ?? null)) {
      lines.push(
        <li key={field}>
          {label}: <del>{shown(was[field] ?? null)}</del> → <ins>{shown(becomes[field] ?? null)}</ins>
        </li>,
      );
    }
  }
  if (now.archived !== after.archived) {
    lines.push(
      <li key="archived">
        {after.archived ? 'The flag is archived: game servers stop receiving it.' : 'The flag is unarchived: game servers receive it again.'}
      </li>,
    );
  }
  const rules = rulesChange(now.rules as Rule[] | undefined, after.rules as Rule[] | undefined);
  if (rules.removed.length > 0) {
    lines.push(
      <li key="removed">
        {rules.removed.length === 1 ? 'This targeting rule is removed:' : `These ${rules.removed.length} targeting rules are removed:`}
        <RuleList rules={rules.removed} />
      </li>,
    );
  }
  if (rules.added.length > 0) {
    lines.push(
      <li key="added">
        {rules.added.length === 1 ? 'This targeting rule is added:' : `These ${rules.added.length} targeting rules are added:`}
        <RuleList rules={rules.added} />
      </li>,
    );
  }
  for (const { before, after: rule } of rules.changed) {
    lines.push(
      <li key={`changed-${rule.id}`}>
        Rule {rule.id} changes: <del>{describeRule(before)}</del> → <ins>{describeRule(rule)}</ins>
      </li>,
    );
  }
  if (rules.reordered) lines.push(<li key="order">The targeting rules change order.</li>);
  if (lines.length === 0) return <p>This version is the flag as it is now: nothing will change.</p>;
  return (
    <>
      <p>What will change:</p>
      <ul className="restore-changes">{lines}</ul>
    </>
  );
}

/** A flag's history, newest first: who did what and why, the difference each change made, and a way back to any state. */
export function History({
  flag,
  write,
  onShowLatest,
  propose,
}: {
  flag: Flag;
  write: FlagWrite;
  onShowLatest: () => void;
  /** Under review: a restore is proposed in a change request (the state to go back to, a title) instead of written. */
  propose?: (after: Snapshot, title: string) => void;
}) {
  const flagId = flag.id;
  const session = useSignedIn();
  const actors = useActors(session.organization?.id);
  const [page, setPage] = useState(1);
  const read = useCallback(() => ok(api.GET('/v1/flags/audit', { params: { query: { flagId, page, limit: 10 } } })), [flagId, page]);
  const { data: answer, problem: readProblem, reload: load } = useLatestRead(read);
  const entries = answer?.results ?? [];
  const [restoreProblem, setRestoreProblem] = useState<ApiProblem | null>(null);
  const [asked, setAsked] = useState<Entry | null>(null);
  const [restored, setRestored] = useState<string | null>(null);
  useOrganizationEvents((event) => {
    if (event.type === 'flags' && event.flagIds.includes(flagId)) void load();
  });

  const when = (entry: Entry) => new Date(entry.createdAt).toLocaleString();
  /** Names an entry of this flag by when it was made, when this page of the history holds it. */
  const entryNamed = (id: string) => {
    const entry = entries.find((candidate) => candidate.id === id);
    return entry ? `the version of ${when(entry)}` : 'an earlier version';
  };
  const says = (entry: Entry) => {
    const action = ACTIONS[entry.action] ?? entry.action;
    const context = entry.context;
    if (context?.restoredFrom) return `restored ${entryNamed(context.restoredFrom)} (${action})`;
    if (context?.scheduleId) return `${action}, as scheduled`;
    if (context?.import) return `${action}, by an import`;
    if (context?.changeRequestId) {
      return `${action}, by applying a change request${context.override ? ` without its approvals (reason: ${context.override.reason})` : ''}`;
    }
    return action;
  };

  const restore = async (entry: Entry) => {
    setAsked(null);
    setRestoreProblem(null);
    setRestored(null);
    if (propose && entry.after) return propose(entry.after, `Restore ${flag.key} to the version of ${when(entry)}`);
    try {
      const now = await write((etag) =>
        okVersioned(
          api.POST('/v1/flags/{flagId}/restore', { params: { path: { flagId }, header: { 'If-Match': etag } }, body: { auditEntryId: entry.id } }),
        ),
      );
      const rules = now.rules?.length ?? 0;
      setRestored(
        `Restored the version of ${when(entry)}: the flag serves ${shown(now.value)}` +
          `${rules === 0 ? ' with no targeting rules' : rules === 1 ? ' with 1 targeting rule' : ` with ${rules} targeting rules`}` +
          `${now.archived ? ', archived' : ''}.`,
      );
      await load();
    } catch (error) {
      setRestoreProblem(error as ApiProblem);
    }
  };

  const problem = restoreProblem?.explain() ?? readProblem?.explain();
  return (
    <section aria-labelledby="history-title" className="history">
      <h2 id="history-title">History</h2>
      {problem && (
        <p className="error" role="alert">
          {problem}{' '}
          {restoreProblem?.code === 'FLAG_CHANGED' && (
            <button type="button" onClick={onShowLatest}>
              Show the latest
            </button>
          )}
        </p>
      )}
      {restored && (
        <p className="saved" role="status">
          {restored}
        </p>
      )}
      <ol className="timeline">
        {entries.map((entry) => {
          const changes = diff(withoutRules(entry.before), withoutRules(entry.after));
          const rulesChanged = entry.before && entry.after && !same(entry.before.rules ?? [], entry.after.rules ?? []);
          return (
            <li key={entry.id}>
              <p>
                <strong>{actors.name(entry.actorType, entry.actorId)}</strong> {says(entry)} <time dateTime={entry.createdAt}>{when(entry)}</time>
              </p>
              {entry.before && entry.after && (changes.length > 0 || rulesChanged) && (
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
                    {rulesChanged && (
                      <tr>
                        <th scope="row">rules</th>
                        <td>
                          <del>
                            <RuleList rules={entry.before.rules as Rule[] | undefined} />
                          </del>
                        </td>
                        <td>
                          <ins>
                            <RuleList rules={entry.after.rules as Rule[] | undefined} />
                          </ins>
                        </td>
                      </tr>
                    )}
                  </tbody>
                </table>
              )}
              {entry.after && session.canWrite && (
                <button type="button" onClick={() => setAsked(entry)}>
                  Restore this version<span className="visually-hidden"> (after the change of {when(entry)})</span>
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
      <ConfirmDialog
        open={asked !== null}
        title={asked ? `Restore the version of ${when(asked)}?` : 'Restore this version?'}
        confirm={propose ? 'Request review of this restore' : 'Restore this version'}
        onConfirm={() => asked && void restore(asked)}
        onCancel={() => setAsked(null)}
      >
        {asked?.after && <RestorePreview now={flag} after={asked.after} />}
      </ConfirmDialog>
    </section>
  );
}
