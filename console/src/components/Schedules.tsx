import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import type { components } from '../../.generated/api';
import type { FlagType } from '../lib/flag-values';
import { Field, FormError } from './Field';
import { ValueEditor } from './ValueEditor';

type Flag = components['schemas']['FeatureFlagDto'];
type Schedule = components['schemas']['FlagScheduleDto'];

/** What a schedule does, in words. */
function describe(change: Schedule['change']): string {
  const parts: string[] = [];
  if (change.value !== undefined) parts.push(`value → ${JSON.stringify(change.value)}`);
  if (change.archived !== undefined) parts.push(change.archived ? 'archive' : 'unarchive');
  if (change.runtime !== undefined) parts.push(`runtime → ${change.runtime}`);
  if (change.name !== undefined) parts.push(`name → ${change.name}`);
  if (change.rules !== undefined) parts.push(change.rules.length ? `${change.rules.length} rules` : 'remove the rules');
  return parts.join(', ');
}

/** A date and time typed in the person's own time zone, as the instant the service takes. */
export function instantOf(local: string): string | null {
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Changes of a flag to apply at a date and time (a live event's start and end): make, list pending, cancel. */
export function Schedules({ flag, canWrite, unavailable }: { flag: Flag; canWrite: boolean; unavailable?: string }) {
  const [pending, setPending] = useState<Schedule[]>([]);
  const [at, setAt] = useState('');
  const [value, setValue] = useState<{ value: unknown; problem: string | null }>({ value: flag.value, problem: null });
  const [problem, setProblem] = useState<ApiProblem | null>(null);

  const load = useCallback(async () => {
    const answer = await ok(api.GET('/v1/flags/{flagId}/schedules', { params: { path: { flagId: flag.id }, query: { limit: 100 } } }));
    setPending(answer.results.filter((schedule) => schedule.state === 'pending'));
  }, [flag.id]);
  useEffect(() => {
    void load().catch(() => undefined);
  }, [load]);
  useOrganizationEvents((event) => {
    if (event.type === 'flags' && event.flagIds.includes(flag.id)) void load().catch(() => undefined);
  });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    const instant = instantOf(at);
    if (!instant) {
      setProblem(new ApiProblem(400, 'VALIDATION_ERROR', 'at: choose a date and time'));
      return;
    }
    try {
      await ok(
        api.POST('/v1/flags/{flagId}/schedules', {
          params: { path: { flagId: flag.id } },
          body: { at: instant, change: { type: flag.type, value: value.value as never } },
        }),
      );
      setAt('');
      await load();
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  const cancel = async (schedule: Schedule) => {
    try {
      await ok(api.DELETE('/v1/flags/{flagId}/schedules/{scheduleId}', { params: { path: { flagId: flag.id, scheduleId: schedule.id } } }));
      await load();
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  return (
    <section aria-labelledby="schedules-title">
      <h2 id="schedules-title">Scheduled changes</h2>
      {pending.length === 0 ? (
        <p>Nothing scheduled.</p>
      ) : (
        <ul className="schedules">
          {pending.map((schedule) => (
            <li key={schedule.id}>
              <time dateTime={schedule.at}>{new Date(schedule.at).toLocaleString()}</time>: {describe(schedule.change)}{' '}
              {canWrite && (
                <button type="button" onClick={() => void cancel(schedule)}>
                  Cancel<span className="visually-hidden"> the change of {new Date(schedule.at).toLocaleString()}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {unavailable && <p className="meta">{unavailable}</p>}
      {canWrite && !unavailable && !flag.locked && !flag.archived && (
        <form onSubmit={submit} noValidate className="flag-form">
          <Field label="Apply at" help="Your local time." error={problem?.field() === 'at' ? problem.message : undefined}>
            {(props) => <input {...props} type="datetime-local" value={at} onChange={(event) => setAt(event.target.value)} />}
          </Field>
          <Field label="New value" error={value.problem ?? (problem?.field() === 'value' ? problem.message : undefined)}>
            {(props) => (
              <ValueEditor
                id={props.id}
                describedBy={props['aria-describedby']}
                type={flag.type as FlagType}
                value={value.value}
                onChange={setValue}
              />
            )}
          </Field>
          <FormError message={problem && !['at', 'value'].includes(problem.field() ?? '') ? problem.explain() : null} />
          <button type="submit" disabled={value.problem !== null}>
            Schedule the change
          </button>
        </form>
      )}
    </section>
  );
}
