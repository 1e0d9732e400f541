import { type FormEvent, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useReviewSetting } from '../api/review';
import { Field, FormError } from '../components/Field';
import { Layout } from '../components/Layout';
import { RequestTitleField, requestReview } from '../components/RequestReview';
import { initialValue, JSON_HELP, ValueEditor } from '../components/ValueEditor';
import { FLAG_TYPES, type FlagType, RUNTIME_HELP } from '../lib/flag-values';
import { navigate } from '../router';

const KEY_HELP = 'What servers read it by; it cannot change later. Lowercase letters, digits, _ and -.';

/** A new flag: its key, name, description, type, a value editor that fits the type, and its runtime. */
export function NewFlag() {
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [type, setType] = useState<FlagType>('boolean');
  const [value, setValue] = useState<{ value: unknown; problem: string | null }>({ value: false, problem: null });
  const [runtime, setRuntime] = useState<'shared' | 'server'>('shared');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  // Under review (the organization's setting), the flag is proposed in a change request, titled by the person.
  const reviewRequired = useReviewSetting().setting?.required === true;
  const [title, setTitle] = useState('');

  const changeType = (next: FlagType) => {
    setType(next);
    setValue({ value: initialValue(next), problem: null });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (value.problem) return;
    setBusy(true);
    setProblem(null);
    try {
      if (reviewRequired) {
        await requestReview(key, { name, description: description || null, type, value: value.value as never, runtime, archived: false }, title);
        return;
      }
      const flag = await ok(
        api.POST('/v1/flags', { body: { key, name, description: description || null, type, value: value.value as never, runtime } }),
      );
      navigate(`/flags/${flag.id}`);
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  const fieldError = (field: string) => (problem?.field() === field ? problem.message : undefined);
  const known = ['key', 'name', 'description', 'type', 'value', 'runtime', ...(reviewRequired ? ['title'] : [])];
  return (
    <Layout title="New flag">
      <form onSubmit={submit} noValidate className="flag-form">
        <Field label="Key" help={KEY_HELP} error={fieldError('key')}>
          {(props) => <input {...props} value={key} autoComplete="off" onChange={(event) => setKey(event.target.value)} />}
        </Field>
        <Field label="Name" error={fieldError('name')}>
          {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label="Description" error={fieldError('description')}>
          {(props) => <textarea {...props} rows={2} value={description} onChange={(event) => setDescription(event.target.value)} />}
        </Field>
        <Field label="Type" error={fieldError('type')}>
          {(props) => (
            <select {...props} value={type} onChange={(event) => changeType(event.target.value as FlagType)}>
              {FLAG_TYPES.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Value" help={type === 'json' ? JSON_HELP : undefined} error={value.problem ?? fieldError('value')}>
          {(props) => <ValueEditor id={props.id} describedBy={props['aria-describedby']} type={type} value={value.value} onChange={setValue} />}
        </Field>
        <Field label="Runtime" help={RUNTIME_HELP} error={fieldError('runtime')}>
          {(props) => (
            <select {...props} value={runtime} onChange={(event) => setRuntime(event.target.value as 'shared' | 'server')}>
              <option value="shared">shared: servers and players</option>
              <option value="server">server: game servers only</option>
            </select>
          )}
        </Field>
        {reviewRequired && <RequestTitleField value={title} onChange={setTitle} error={fieldError('title')} />}
        <FormError message={problem && !known.includes(problem.field() ?? '') ? problem.explain() : null} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || value.problem !== null}>
            {reviewRequired ? 'Request review' : 'Create flag'}
          </button>
          <button type="button" onClick={() => navigate('/flags')}>
            Cancel
          </button>
        </div>
      </form>
    </Layout>
  );
}
