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
