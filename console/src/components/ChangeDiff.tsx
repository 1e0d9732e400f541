import type { ReactNode } from 'react';
import type { components } from '../../.generated/api';
import { same, shown } from '../lib/diff';
import { describeRule, type Rule, rulesChange } from '../lib/rules';
import { Link } from '../router';

type Change = components['schemas']['ChangeRequestChangeDto'];
type State = components['schemas']['FlagStateDto'];

const FIELDS = [
  ['value', 'Value'],
  ['type', 'Type'],
  ['runtime', 'Runtime'],
  ['name', 'Name'],
  ['description', 'Description'],
] as const;

function RuleList({ rules }: { rules: readonly Rule[] }) {
  return (
    <ol className="rule-list">
      {rules.map((rule) => (
        <li key={rule.id}>{describeRule(rule)}</li>
      ))}
    </ol>
  );
}

/** What going from `before` to `after` does to one flag, field by field (before → after), its rules rule by rule. */
export function stateChanges(before: State | null, after: State | null): ReactNode[] {
  const lines: ReactNode[] = [];
  for (const [field, label] of FIELDS) {
    const was = before ? (before[field] ?? null) : undefined;
    const becomes = after ? (after[field] ?? null) : undefined;
    if (after && (!before || !same(was, becomes))) {
      lines.push(
        <li key={field}>
          {label}:{' '}
          {before && (
            <>
              <del>{shown(was)}</del> →{' '}
            </>
          )}
          <ins>{shown(becomes)}</ins>
        </li>,
      );
    }
  }
  if (before && after && before.archived !== after.archived) {
    lines.push(<li key="archived">{after.archived ? 'Archived: game servers stop receiving it.' : 'Unarchived: game servers receive it again.'}</li>);
  } else if (!before && after?.archived) {
    lines.push(<li key="archived">Created archived: not served.</li>);
  }
  const rules = rulesChange((before?.rules ?? []) as Rule[], (after?.rules ?? []) as Rule[]);
  if (after && rules.removed.length > 0) {
    lines.push(
      <li key="removed">
        {rules.removed.length === 1 ? 'Targeting rule removed:' : `${rules.removed.length} targeting rules removed:`}
        <RuleList rules={rules.removed} />
      </li>,
    );
  }
  if (after && rules.added.length > 0) {
    lines.push(
      <li key="added">
        {rules.added.length === 1 ? 'Targeting rule added:' : `${rules.added.length} targeting rules added:`}
        <RuleList rules={rules.added} />
      </li>,
    );
  }
  for (const { before: was, after: rule } of rules.changed) {
    lines.push(
      <li key={`changed-${rule.id}`}>
        Rule {rule.id}: <del>{describeRule(was)}</del> → <ins>{describeRule(rule)}</ins>
      </li>,
    );
  }
  if (after && rules.reordered) lines.push(<li key="order">The targeting rules change order.</li>);
  return lines;
}

/** One flag of a change request: created, deleted, or changed field by field. */
export function ChangeDiff({ change }: { change: Change }) {
  const before = (change.before ?? null) as State | null;
  const after = (change.after ?? null) as State | null;
  const what = !before ? 'created' : !after ? 'deleted' : 'changed';
  const lines = stateChanges(before, after);
  return (
    <article className="change" aria-label={`Flag ${change.key}`}>
      <h3>
        {change.flagId && after ? (
          <Link to={`/flags/${change.flagId}`}>
            <code>{change.key}</code>
          </Link>
        ) : (
          <code>{change.key}</code>
        )}{' '}
        <span className="badge">{what}</span>
      </h3>
      {!after ? (
        <p>The flag is deleted: game servers stop receiving it and its key becomes free.</p>
      ) : lines.length === 0 ? (
        <p>Nothing changes: the flag already is this.</p>
      ) : (
        <ul className="restore-changes">{lines}</ul>
      )}
    </article>
  );
}
