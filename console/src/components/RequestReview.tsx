import { api, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { navigate } from '../router';
import { Field } from './Field';
import { announceOnNextPage } from './page-notice';

type State = components['schemas']['FlagStateDto'];

/** Makes a change request of one flag's proposed whole state and goes to its page. */
export async function requestReview(key: string, after: State | null, title: string, description?: string): Promise<void> {
  const request = await ok(
    api.POST('/v1/change-requests', { body: { title: title.trim(), description: description?.trim() || null, changes: [{ key, after }] } }),
  );
  announceOnNextPage('Review requested: the change is made once the request is approved and applied.');
  navigate(`/change-requests/${request.id}`);
}

/** The title of the change request a flag form makes when the organization requires review. */
export function RequestTitleField({ value, onChange, error }: { value: string; onChange: (title: string) => void; error?: string }) {
  return (
    <Field label="Change request title" help="This organization requires review: your change is made once a reviewer approves it." error={error}>
      {(props) => <input {...props} value={value} maxLength={200} onChange={(event) => onChange(event.target.value)} />}
    </Field>
  );
}
