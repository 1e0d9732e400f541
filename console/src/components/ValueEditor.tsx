import { useEffect, useState } from 'react';
import { same } from '../lib/diff';
import { type FlagType, MAX_VALUE_BYTES, MAX_VALUE_DEPTH, parseJsonValue, parseNumberValue, valueProblem } from '../lib/flag-values';

/**
 * An editor that fits the flag's type: a switch, a text field, a number field, or JSON checked against the 4 KB and
 * 4-level rules as it is typed. It reports the value, or the problem that keeps the form from being sent.
 */
export function ValueEditor({
  id,
  type,
  value,
  disabled,
  describedBy,
  onChange,
}: {
  id: string;
  type: FlagType;
  value: unknown;
  disabled?: boolean;
  describedBy?: string;
  onChange: (next: { value: unknown; problem: string | null }) => void;
}) {
  const [text, setText] = useState(() => textOf(type, value));
  // A value set from outside (a restore, a change by someone else) replaces the text; the person's own typing, which
  // already says that value ("2.50" for 2.5), is left as typed.
  useEffect(() => {
    setText((current) => (represents(type, current, value) ? current : textOf(type, value)));
  }, [type, value]);

  if (type === 'boolean') {
    const on = value === true;
    return (
      <button
        id={id}
        type="button"
        role="switch"
        aria-checked={on}
        aria-describedby={describedBy}
        className="switch"
        disabled={disabled}
        onClick={() => onChange({ value: !on, problem: null })}
      >
        <span aria-hidden="true" className="switch-track">
          <span className="switch-thumb" />
        </span>
        <span>{on ? 'On (true)' : 'Off (false)'}</span>
      </button>
    );
  }

  const update = (next: string) => {
    setText(next);
    if (type === 'string') onChange({ value: next, problem: valueProblem('string', next) });
    else if (type === 'number') onChange(parseNumberValue(next));
    else onChange(parseJsonValue(next));
  };

  if (type === 'json') {
    return (
      <textarea
        id={id}
        className="code"
        rows={8}
        spellCheck={false}
        value={text}
        disabled={disabled}
        aria-describedby={describedBy}
        onChange={(event) => update(event.target.value)}
      />
    );
  }
  return (
    <input
      id={id}
      type="text"
      inputMode={type === 'number' ? 'decimal' : undefined}
      value={text}
      disabled={disabled}
      aria-describedby={describedBy}
      onChange={(event) => update(event.target.value)}
    />
  );
}

export const JSON_HELP =
  `Any JSON: at most ${MAX_VALUE_BYTES / 1024} KB and ${MAX_VALUE_DEPTH} levels deep. ` +
  'Object keys are not kept in order (they come back sorted): where order matters, use an array.';

function represents(type: FlagType, text: string, value: unknown): boolean {
  if (type === 'string') return text === value;
  if (type === 'number') return parseNumberValue(text).value === value;
  if (type === 'json') {
    const parsed = parseJsonValue(text);
    return parsed.problem === null && same(parsed.value, value);
  }
  return true;
}

function textOf(type: FlagType, value: unknown): string {
  if (type === 'string') return typeof value === 'string' ? value : '';
  if (type === 'number') return typeof value === 'number' ? String(value) : '0';
  if (type === 'json') return value === undefined ? '{}' : JSON.stringify(value, null, 2);
  return '';
}

/** The value a new flag of `type` starts with. */
export function initialValue(type: FlagType): unknown {
  return { boolean: false, string: '', number: 0, json: {} }[type];
}
