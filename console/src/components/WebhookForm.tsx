import { type FormEvent, useState } from 'react';
import type { ApiProblem } from '../api/client';
import { EVENT_GROUPS, FORMATS, flagKeysText, parseFlagKeys, type WebhookEndpoint, type WebhookEventType, type WebhookFormat } from '../lib/webhooks';
import { Field, FormError } from './Field';

/** What the form sends: the fields POST takes, and PATCH too. */
export interface WebhookFields {
  url: string;
  description: string | null;
  events: WebhookEventType[];
  format: WebhookFormat;
  flagKeys: string[] | null;
}

/** The fields the API's 400 names first: each refusal is shown beside its control, any other above the button. */
const FIELDS = new Set(['url', 'description', 'events', 'format', 'flagKeys']);

/**
 * An endpoint's URL, description, events (grouped), format and optional flag keys: empty for a new endpoint, the
 * endpoint's own for an edit. The API's refusal (`problem`) is shown beside the field its message names.
 */
export function WebhookForm({
  initial,
  submitLabel,
  problem,
  busy,
  onSave,
}: {
  initial?: WebhookEndpoint;
  submitLabel: string;
  problem: ApiProblem | null;
  busy: boolean;
  onSave: (fields: WebhookFields) => void;
}) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [description, setDescription] = useState(initial?.description ?? '');
  const [events, setEvents] = useState<WebhookEventType[]>(initial?.events ?? ['flag.changed']);
  const [format, setFormat] = useState<WebhookFormat>(initial?.format ?? 'standard');
  const [flagKeys, setFlagKeys] = useState(flagKeysText(initial?.flagKeys ?? null));
  const field = problem?.field();
  const errorOf = (name: string) => (field === name ? problem!.message : undefined);

  const save = (event: FormEvent) => {
    event.preventDefault();
    // The API's order of events, whatever order they were ticked in.
    const ordered = EVENT_GROUPS.flatMap((group) => group.events.map((option) => option.type)).filter((type) => events.includes(type));
    onSave({ url: url.trim(), description: description.trim() || null, events: ordered, format, flagKeys: parseFlagKeys(flagKeys) });
  };
  const toggle = (type: WebhookEventType, on: boolean) => setEvents((current) => (on ? [...current, type] : current.filter((t) => t !== type)));

  return (
    <form onSubmit={save} noValidate className="flag-form">
      <Field label="URL" help="Where deliveries are POSTed: an https URL (a Slack or Discord webhook URL for those formats)." error={errorOf('url')}>
        {(props) => <input {...props} type="url" value={url} onChange={(event) => setUrl(event.target.value)} />}
      </Field>
      <Field label="Description (optional)" error={errorOf('description')}>
        {(props) => <input {...props} value={description} onChange={(event) => setDescription(event.target.value)} />}
      </Field>
      <fieldset aria-describedby={errorOf('events') ? 'webhook-events-error' : undefined}>
        <legend>Events</legend>
        {EVENT_GROUPS.map((group) => (
          <fieldset key={group.group} className="event-group">
            <legend>{group.group}</legend>
            {group.events.map((option) => (
              <label key={option.type} className="check">
                <input type="checkbox" checked={events.includes(option.type)} onChange={(event) => toggle(option.type, event.target.checked)} />
                <span>
                  {option.label} <code className="meta">{option.type}</code>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
        {errorOf('events') && (
          <p className="error" id="webhook-events-error" role="alert">
            {errorOf('events')}
          </p>
        )}
      </fieldset>
      <Field label="Format" error={errorOf('format')}>
        {(props) => (
          <select {...props} value={format} onChange={(event) => setFormat(event.target.value as WebhookFormat)}>
            {FORMATS.map((option) => (
              <option key={option.format} value={option.format}>
                {option.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Only these flags (optional)"
        help="Flag keys, separated by commas: flag changes and change requests touching any of them. Empty: every flag. Review-setting and storage events always go."
        error={errorOf('flagKeys')}
      >
        {(props) => <input {...props} value={flagKeys} onChange={(event) => setFlagKeys(event.target.value)} />}
      </Field>
      <FormError message={problem && !(field && FIELDS.has(field)) ? problem.explain() : null} />
      <button type="submit" className="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}
