import { useCallback, useEffect, useState } from 'react';
import { api, ok } from '../api/client';
import type { ReviewSetting } from '../api/review';
import type { components } from '../../.generated/api';
import { Field } from '../components/Field';

type ChangeRequest = components['schemas']['ChangeRequestDto'];

/** The change request's title as ImportFlagsDto takes it (1-200 characters). */
export const TITLE_MAX_LENGTH = 200;
/** The change request's description as ImportFlagsDto takes it (at most 2,000 characters). */
export const DESCRIPTION_MAX_LENGTH = 2000;

const REVIEW_OFF: ReviewSetting = { required: false, approvals: 1, selfApproval: false };

/** The title a promotion's change request is given until the person writes their own (no count before any is chosen). */
export function defaultTitle(count: number, sourceName: string): string {
  const flags = count === 0 ? 'flags' : `${count} flag${count === 1 ? '' : 's'}`;
  return `Promote ${flags} from ${sourceName}`.slice(0, TITLE_MAX_LENGTH);
}

/**
 * The target organization's review setting, read again whenever the target changes (the event stream is the current
 * organization's only, so `reload` is the page's way to hear of a change there). Null while it is read; a failed read
 * counts as review off: a direct import then answers 403 REVIEW_REQUIRED, which the page answers by reading it again.
 */
export function useTargetReview(targetId: string): { setting: ReviewSetting | null; reload: () => void } {
  const [read, setRead] = useState<{ targetId: string; setting: ReviewSetting } | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (!targetId) return;
    // An answer about a target the person has already left is dropped.
    let current = true;
    ok(api.GET('/v1/organization/review', { headers: { 'X-Organization-Id': targetId } })).then(
      (setting) => current && setRead({ targetId, setting }),
      () => current && setRead({ targetId, setting: REVIEW_OFF }),
    );
    return () => {
      current = false;
    };
  }, [targetId, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { setting: read?.targetId === targetId ? read.setting : null, reload };
}

/** What review in the target asks of a promotion, in a sentence. */
export function ReviewNotice({ targetName, setting }: { targetName: string; setting: ReviewSetting }) {
  const count = `${setting.approvals} approval${setting.approvals === 1 ? '' : 's'}`;
  const by = setting.selfApproval ? 'yours may count' : `by ${setting.approvals === 1 ? 'another member' : 'other members'}`;
  return (
    <p className="notice" role="note">
      {targetName} requires review of flag changes: promoting makes a change request there, with the dry run’s report, and its flags change once it is
      approved ({count}, {by}) and applied.
    </p>
  );
}

/** The change request's title (required, prefilled) and optional description. */
export function RequestFields(props: {
  targetName: string;
  title: string;
  description: string;
  onTitle: (title: string) => void;
  onDescription: (description: string) => void;
}) {
  return (
    <section aria-labelledby="request-fields-title" className="flag-form">
      <h2 id="request-fields-title">The change request in {props.targetName}</h2>
      <Field label="Change request title" help={`What reviewers in ${props.targetName} see in their list of change requests.`}>
        {(field) => (
          <input {...field} required maxLength={TITLE_MAX_LENGTH} value={props.title} onChange={(event) => props.onTitle(event.target.value)} />
        )}
      </Field>
      <Field label="Description (optional)">
        {(field) => (
          <textarea
            {...field}
            rows={2}
            maxLength={DESCRIPTION_MAX_LENGTH}
            value={props.description}
            onChange={(event) => props.onDescription(event.target.value)}
          />
        )}
      </Field>
    </section>
  );
}

/** The request made: nothing changed in the target yet; the way to it is to switch there. */
export function RequestedNotice({ request, targetName, onOpen }: { request: ChangeRequest; targetName: string; onOpen: () => void }) {
  const count = request.changes.length;
  return (
    <section aria-labelledby="requested-title">
      <h2 id="requested-title">Review requested</h2>
      <p role="status">
        “{request.title}” is open in {targetName}, proposing {count} flag{count === 1 ? '' : 's'}. Nothing changed there yet: the flags change once
        the request is approved and applied.
      </p>
      <div className="actions">
        <button type="button" className="primary" onClick={onOpen}>
          Open the request in {targetName}
        </button>
      </div>
    </section>
  );
}
