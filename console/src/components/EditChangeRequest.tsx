import { type FormEvent, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { DESCRIPTION_MAX_LENGTH, TITLE_MAX_LENGTH } from '../pages/PromoteReview';
import { Field, FormError } from './Field';
import { instantOf } from './Schedules';

type Request = components['schemas']['ChangeRequestDto'];

const EDITABLE = ['title', 'description', 'applyAt'] as const;

/** An instant as a `datetime-local` input holds it: the person's local date and time, to the minute. */
function localInput(instant: string | null): string {
  if (!instant) return '';
  const date = new Date(instant);
  const two = (part: number) => String(part).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
}

/**
 * The author's edit of a pending request's title, description and time to apply, hidden until asked for. An edit
 * clears the approvals (decisions.md: reviewers approve a version of the request), so the form says so before Save.
 */
export function EditChangeRequest({ request, onSaved }: { request: Request; onSaved: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [applyAt, setApplyAt] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const approvals = request.reviews.filter((entry) => entry.decision === 'approve').length;

  const start = () => {
    setTitle(request.title);
    setDescription(request.description ?? '');
    setApplyAt(localInput(request.applyAt));
    setProblem(null);
    setEditing(true);
  };

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const body: { title?: string; description?: string | null; applyAt?: string | null } = {};
    if (title.trim() !== request.title) body.title = title.trim();
    if (description.trim() !== (request.description ?? '')) body.description = description.trim() || null;
    // Sent only when changed: the input holds minutes, and a kept applyAt sent back rounded could fall in the past.
    if (applyAt !== localInput(request.applyAt)) {
      const instant = applyAt === '' ? null : instantOf(applyAt);
      if (applyAt !== '' && instant === null) {
        setProblem(new ApiProblem(400, 'VALIDATION_ERROR', 'applyAt: choose a date and time, or leave it empty'));
        return;
      }
      body.applyAt = instant;
    }
    // Nothing changed: no edit, so the approvals stay.
    if (Object.keys(body).length === 0) {
      setEditing(false);
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      await ok(api.PATCH('/v1/change-requests/{changeRequestId}', { params: { path: { changeRequestId: request.id } }, body }));
      setEditing(false);
      await onSaved();
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  if (!editing) {
    return (
      <div className="actions">
        <button type="button" onClick={start}>
          Edit details
        </button>
      </div>
    );
  }
  const field = problem?.field();
  const fieldError = (name: (typeof EDITABLE)[number]) => (field === name ? problem?.message : undefined);
  return (
    <section aria-labelledby="edit-details-title">
      <h2 id="edit-details-title">Edit details</h2>
      <form onSubmit={(event) => void save(event)} noValidate className="flag-form">
        <p className="notice warning" role="note">
          {approvals > 0
            ? `Saving clears its ${approvals} approval${approvals === 1 ? '' : 's'}: the request is open again and is reviewed again before it can be applied.`
            : 'Saving clears its approvals: reviewers review the edited request.'}
        </p>
        <Field label="Title" error={fieldError('title')}>
          {(props) => <input {...props} required maxLength={TITLE_MAX_LENGTH} value={title} onChange={(event) => setTitle(event.target.value)} />}
        </Field>
        <Field label="Description (optional)" error={fieldError('description')}>
          {(props) => (
            <textarea
              {...props}
              rows={2}
              maxLength={DESCRIPTION_MAX_LENGTH}
              value={description}
              onChange={(event) => setDescription(event.target.value)}
            />
          )}
        </Field>
        <Field
          label="Apply at (optional)"
          help="Your local time: once approved, it is applied then (within a year). Empty: applied by hand."
          error={fieldError('applyAt')}
        >
          {(props) => <input {...props} type="datetime-local" value={applyAt} onChange={(event) => setApplyAt(event.target.value)} />}
        </Field>
        <FormError message={problem && !EDITABLE.some((name) => name === field) ? problem.explain() : null} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy || title.trim() === ''}>
            Save details
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
