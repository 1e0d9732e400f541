/** Targeting rules as the console edits them: each condition's values as the person types them. */
export type Operator = 'in' | 'notIn' | 'gte' | 'lt' | 'semverGte' | 'semverLt' | 'percentage';

export const OPERATORS: { value: Operator; label: string }[] = [
  { value: 'in', label: 'is one of' },
  { value: 'notIn', label: 'is none of' },
  { value: 'gte', label: 'is at least (number)' },
  { value: 'lt', label: 'is below (number)' },
  { value: 'semverGte', label: 'is version at least' },
  { value: 'semverLt', label: 'is version below' },
  { value: 'percentage', label: 'falls in the rollout' },
];

export interface DraftCondition {
  attribute: string;
  operator: Operator;
  /** in/notIn: comma-separated; gte/lt/semver: one value; percentage: "from-to"... kept as two fields below. */
  text: string;
  from: string;
  to: string;
}

export interface DraftRule {
  id: string;
  conditions: DraftCondition[];
  value: unknown;
}

export interface Rule {
  id: string;
  conditions: { attribute: string; operator: Operator; values: (string | number)[] }[];
  value: unknown;
}

export function draftOf(rule: Rule): DraftRule {
  return {
    id: rule.id,
    value: rule.value,
    conditions: rule.conditions.map((condition) => ({
      attribute: condition.attribute,
      operator: condition.operator,
      text: condition.operator === 'percentage' ? '' : condition.values.join(', '),
      from: condition.operator === 'percentage' ? String(condition.values[0]) : '0',
      to: condition.operator === 'percentage' ? String(condition.values[1]) : '10',
    })),
  };
}

/** A flag's stored rules as drafts (none when it has no `rules`). */
export function draftsOf(rules: readonly Rule[] | null | undefined): DraftRule[] {
  return (rules ?? []).map(draftOf);
}

/**
 * The drafts an open editor shows once the stored rules went from `before` to `after` (someone else's edit, a restore,
 * this editor's own save): the new rules when the drafts hold no unsaved edit; otherwise the person's drafts, kept,
 * with `changedElsewhere` set so the editor can say so. Compared by content: drafts the person typed back to the stored
 * rules count as unsaved edits no longer.
 */
export function followStoredRules(
  drafts: DraftRule[],
  before: readonly Rule[],
  after: readonly Rule[],
): { drafts: DraftRule[]; changedElsewhere: boolean } {
  const mine = JSON.stringify(drafts);
  const latest = draftsOf(after);
  if (mine === JSON.stringify(latest) || mine === JSON.stringify(draftsOf(before))) return { drafts: latest, changedElsewhere: false };
  return { drafts, changedElsewhere: true };
}

/** The rule the API takes; the service checks it (a 400 names the field, shown beside the rule). */
export function ruleOf(draft: DraftRule): Rule {
  return {
    id: draft.id.trim(),
    value: draft.value,
    conditions: draft.conditions.map((condition) => ({
      attribute: condition.attribute.trim(),
      operator: condition.operator,
      values: valuesOf(condition),
    })),
  };
}

function valuesOf(condition: DraftCondition): (string | number)[] {
  switch (condition.operator) {
    case 'in':
    case 'notIn':
      return condition.text
        .split(',')
        .map((value) => value.trim())
        .filter((value) => value !== '');
    case 'gte':
    case 'lt':
      return [numberOr(condition.text.trim())];
    case 'percentage':
      return [numberOr(condition.from.trim()), numberOr(condition.to.trim())];
    default:
      return [condition.text.trim()];
  }
}

/** A number when the text is one; else the text, which the service refuses with a message naming the field. */
function numberOr(text: string): number | string {
  const value = Number(text);
  return text !== '' && Number.isFinite(value) ? value : text;
}

/** Which rule (and condition) an API message is about: `rules[1].conditions[0].values must …`. */
export function ruleIndexOf(message: string): { rule: number; condition?: number } | null {
  const match = /^(?:property )?rules\[(\d+)\](?:\.conditions\[(\d+)\])?/.exec(message);
  if (!match) return null;
  return { rule: Number(match[1]), condition: match[2] === undefined ? undefined : Number(match[2]) };
}

export function newCondition(): DraftCondition {
  return { attribute: 'region', operator: 'in', text: '', from: '0', to: '10' };
}

const READ_AS: Record<Operator, string> = {
  in: 'is one of',
  notIn: 'is none of',
  gte: 'is at least',
  lt: 'is below',
  semverGte: 'is version at least',
  semverLt: 'is version below',
  percentage: 'falls in the rollout',
};

/** A rule as a sentence, as the rules editor shows it: `europe: region is one of eu-west, eu-central → true`. */
export function describeRule(rule: Rule): string {
  const conditions = rule.conditions.map((condition) =>
    condition.operator === 'percentage'
      ? `${condition.attribute} ${READ_AS.percentage} ${condition.values[0]}–${condition.values[1]} %`
      : `${condition.attribute} ${READ_AS[condition.operator] ?? condition.operator} ${condition.values.join(', ')}`,
  );
  return `${rule.id}: ${conditions.join(' and ')} → ${JSON.stringify(rule.value)}`;
}

/**
 * What going from the rules `before` to `after` does, rule by rule (matched by id): the rules removed, added, and
 * changed (with both readings), and whether the order alone changed.
 */
export function rulesChange(
  before: readonly Rule[] | null | undefined,
  after: readonly Rule[] | null | undefined,
): { removed: Rule[]; added: Rule[]; changed: { before: Rule; after: Rule }[]; reordered: boolean } {
  const was = new Map((before ?? []).map((rule) => [rule.id, rule]));
  const now = new Map((after ?? []).map((rule) => [rule.id, rule]));
  const removed = [...was.values()].filter((rule) => !now.has(rule.id));
  const added = [...now.values()].filter((rule) => !was.has(rule.id));
  const changed = [...now.values()]
    .filter((rule) => was.has(rule.id) && describeRule(was.get(rule.id)!) !== describeRule(rule))
    .map((rule) => ({ before: was.get(rule.id)!, after: rule }));
  const kept = (rules: readonly Rule[] | null | undefined, other: Map<string, Rule>) =>
    (rules ?? []).filter((rule) => other.has(rule.id)).map((rule) => rule.id);
  const reordered = kept(before, now).join('\n') !== kept(after, was).join('\n');
  return { removed, added, changed, reordered };
}
