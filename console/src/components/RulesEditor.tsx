import { type FormEvent, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { parseJsonValue, type FlagType } from '../lib/flag-values';
import {
  type DraftCondition,
  type DraftRule,
  draftsOf,
  followStoredRules,
  newCondition,
  OPERATORS,
  type Operator,
  type Rule,
  ruleIndexOf,
  ruleOf,
} from '../lib/rules';
import { Field, FormError } from './Field';
import { initialValue, ValueEditor } from './ValueEditor';

type Flag = components['schemas']['FeatureFlagDto'];
type Evaluation = components['schemas']['FlagEvaluationDto'];

/**
 * A flag's targeting rules: conditions on the evaluation context and a rollout percentage, each rule with a value of
 * the flag's type; the first rule whose conditions all hold gives its value. And a preview: the value a context gets.
 */
export function RulesEditor({
  flag,
  editable,
  save: saveRules,
  saveLabel = 'Save rules',
  onShowLatest,
}: {
  flag: Flag;
  editable: boolean;
  /** Saves the rules as the page writes the flag (with its version as If-Match), answering the flag as saved. */
  save: (rules: Rule[]) => Promise<Flag>;
  /** The save button's words ("Request review" when the organization requires review). */
  saveLabel?: string;
  /** The flag as it is now, this editor's drafts discarded. */
  onShowLatest: () => void;
}) {
  const stored = (flag.rules ?? []) as Rule[];
  const [rules, setRules] = useState<DraftRule[]>(() => draftsOf(stored));
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [saved, setSaved] = useState(false);
  const type = flag.type as FlagType;

  // The stored rules changed (someone else, a restore, this editor's save): followed at once unless the person holds
  // unsaved edits, which are never overwritten.
  const [shown, setShown] = useState(stored);
  const [changedElsewhere, setChangedElsewhere] = useState(false);
  if (JSON.stringify(stored) !== JSON.stringify(shown)) {
    const next = followStoredRules(rules, shown, stored);
    setShown(stored);
    setRules(next.drafts);
    setChangedElsewhere(next.changedElsewhere);
  }

  const update = (index: number, change: (rule: DraftRule) => DraftRule) => {
    setSaved(false);
    setRules((current) => current.map((rule, at) => (at === index ? change(rule) : rule)));
  };
  const updateCondition = (index: number, at: number, change: Partial<DraftCondition>) =>
    update(index, (rule) => ({ ...rule, conditions: rule.conditions.map((condition, i) => (i === at ? { ...condition, ...change } : condition)) }));
  const move = (index: number, by: number) =>
    setRules((current) => {
      const next = [...current];
      const [rule] = next.splice(index, 1);
      next.splice(index + by, 0, rule);
      return next;
    });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    setSaved(false);
    try {
      const updated = await saveRules(rules.map(ruleOf));
      setRules(draftsOf(updated.rules as Rule[] | undefined));
      setChangedElsewhere(false);
      setSaved(true);
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  const about = problem ? ruleIndexOf(problem.message) : null;
  return (
    <section aria-labelledby="rules-title">
      <h2 id="rules-title">Targeting rules</h2>
      <p className="help">
        The first rule whose conditions all hold gives its value; when none holds, servers and players get the flag's value. A rollout puts the same
        share of ids in, always the same ones, and keeps them in as it grows.
      </p>
      {changedElsewhere && (
        <p className="notice warning" role="status">
          These rules were changed elsewhere while you were editing them; saving yours replaces that change.{' '}
          <button
            type="button"
            onClick={() => {
              setChangedElsewhere(false);
              setRules(draftsOf(stored));
            }}
          >
            Show the latest rules (discard my edits)
          </button>
        </p>
      )}
      <form onSubmit={save} noValidate>
        <ol className="rules">
          {rules.map((rule, index) => (
            <li key={index} className="rule">
              <fieldset>
                <legend>Rule {index + 1}</legend>
                <Field label={`Rule ${index + 1} id`} error={about?.rule === index && about.condition === undefined ? problem!.message : undefined}>
                  {(props) => (
                    <input
                      {...props}
                      value={rule.id}
                      disabled={!editable}
                      onChange={(event) => update(index, (current) => ({ ...current, id: event.target.value }))}
                    />
                  )}
                </Field>
                {rule.conditions.map((condition, at) => (
                  <fieldset key={at} className="condition">
                    <legend>
                      Rule {index + 1}, condition {at + 1}
                    </legend>
                    <div className="condition-fields">
                      <Field label="Attribute">
                        {(props) => (
                          <input
                            {...props}
                            value={condition.attribute}
                            disabled={!editable}
                            onChange={(event) => updateCondition(index, at, { attribute: event.target.value })}
                          />
                        )}
                      </Field>
                      <Field label="Operator">
                        {(props) => (
                          <select
                            {...props}
                            value={condition.operator}
                            disabled={!editable}
                            onChange={(event) => updateCondition(index, at, { operator: event.target.value as Operator })}
                          >
                            {OPERATORS.map((operator) => (
                              <option key={operator.value} value={operator.value}>
                                {operator.label}
                              </option>
                            ))}
                          </select>
                        )}
                      </Field>
                      {condition.operator === 'percentage' ? (
                        <>
                          <Field label="From %">
                            {(props) => (
                              <input
                                {...props}
                                inputMode="decimal"
                                value={condition.from}
                                disabled={!editable}
                                onChange={(event) => updateCondition(index, at, { from: event.target.value })}
                              />
                            )}
                          </Field>
                          <Field label="To %">
                            {(props) => (
                              <input
                                {...props}
                                inputMode="decimal"
                                value={condition.to}
                                disabled={!editable}
                                onChange={(event) => updateCondition(index, at, { to: event.target.value })}
                              />
                            )}
                          </Field>
                        </>
                      ) : (
                        <Field label={condition.operator === 'in' || condition.operator === 'notIn' ? 'Values (comma-separated)' : 'Value'}>
                          {(props) => (
                            <input
                              {...props}
                              value={condition.text}
                              disabled={!editable}
                              onChange={(event) => updateCondition(index, at, { text: event.target.value })}
                            />
                          )}
                        </Field>
                      )}
                    </div>
                    {about?.rule === index && about.condition === at && (
                      <p className="error" role="alert">
                        {problem!.message}
                      </p>
                    )}
                    {editable && rule.conditions.length > 1 && (
                      <button
                        type="button"
                        onClick={() => update(index, (current) => ({ ...current, conditions: current.conditions.filter((_, i) => i !== at) }))}
                      >
                        Remove condition {at + 1} of rule {index + 1}
                      </button>
                    )}
                  </fieldset>
                ))}
                {editable && (
                  <button
                    type="button"
                    onClick={() => update(index, (current) => ({ ...current, conditions: [...current.conditions, newCondition()] }))}
                  >
                    Add a condition to rule {index + 1}
                  </button>
                )}
                <Field label={`Rule ${index + 1} value`}>
                  {(props) => (
                    <ValueEditor
                      id={props.id}
                      describedBy={props['aria-describedby']}
                      type={type}
                      value={rule.value}
                      disabled={!editable}
                      onChange={(next) => update(index, (current) => ({ ...current, value: next.value ?? current.value }))}
                    />
                  )}
                </Field>
                {editable && (
                  <div className="actions">
                    <button type="button" disabled={index === 0} onClick={() => move(index, -1)}>
                      Move rule {index + 1} up
                    </button>
                    <button type="button" disabled={index === rules.length - 1} onClick={() => move(index, 1)}>
                      Move rule {index + 1} down
                    </button>
                    <button type="button" className="danger" onClick={() => setRules((current) => current.filter((_, i) => i !== index))}>
                      Remove rule {index + 1}
                    </button>
                  </div>
                )}
              </fieldset>
            </li>
          ))}
        </ol>
        {rules.length === 0 && <p>No rules: everyone gets the flag's value.</p>}
        <FormError message={problem && !about ? problem.explain() : null} />
        {problem?.code === 'FLAG_CHANGED' && (
          <button type="button" onClick={onShowLatest}>
            Show the latest (discard my rules)
          </button>
        )}
        {saved && (
          <p className="saved" role="status">
            Rules saved.
          </p>
        )}
        {editable && (
          <div className="actions">
            <button
              type="button"
              onClick={() =>
                setRules((current) => [
                  ...current,
                  { id: `rule-${current.length + 1}`, conditions: [newCondition()], value: type === 'boolean' ? true : initialValue(type) },
                ])
              }
            >
              Add a rule
            </button>
            <button type="submit" className="primary">
              {saveLabel}
            </button>
          </div>
        )}
      </form>
      <Preview flagId={flag.id} />
    </section>
  );
}

/** What a given server or player gets: POST /v1/flags/{flagId}/evaluate, the evaluator OFREP and the SDK share. */
function Preview({ flagId }: { flagId: string }) {
  const [context, setContext] = useState('{\n  "serverId": "eu-west-17",\n  "region": "eu-west"\n}');
  const [answer, setAnswer] = useState<Evaluation | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const evaluate = async (event: FormEvent) => {
    event.preventDefault();
    setAnswer(null);
    const parsed = parseJsonValue(context);
    if (parsed.problem !== null || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
      setProblem(parsed.problem ?? 'The context must be a JSON object, such as {"serverId": "eu-west-17"}.');
      return;
    }
    setProblem(null);
    try {
      setAnswer(
        await ok(api.POST('/v1/flags/{flagId}/evaluate', { params: { path: { flagId } }, body: { context: parsed.value as Record<string, never> } })),
      );
    } catch (error) {
      setProblem((error as ApiProblem).explain());
    }
  };
  return (
    <form onSubmit={evaluate} noValidate className="preview">
      <h3>Preview</h3>
      <Field label="Context (JSON)" help="The attributes of a server or player: serverId, region, build, targetingKey, …" error={problem}>
        {(props) => <textarea {...props} className="code" rows={4} value={context} onChange={(event) => setContext(event.target.value)} />}
      </Field>
      <button type="submit">Evaluate</button>
      {answer && (
        <p role="status" className="evaluation">
          Gets <code>{JSON.stringify(answer.value)}</code> (
          {answer.reason === 'STATIC' ? 'no rules' : answer.reason === 'DEFAULT' ? 'no rule matched' : `rule ${answer.variant}`}, {answer.reason})
        </p>
      )}
    </form>
  );
}
