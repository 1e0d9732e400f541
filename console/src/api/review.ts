import { useCallback, useEffect, useState } from 'react';
import type { components } from '../../.generated/api';
import { api, ok } from './client';
import { useOrganizationEvents } from './events';

export type ReviewSetting = components['schemas']['ReviewSettingDto'];

/**
 * The organization's review setting (GET /v1/organization/review), read again when anyone changes it (the
 * `review-setting` event). Null until read; a failed read counts as review off (the service still refuses a direct
 * write with 403 REVIEW_REQUIRED, which the page shows).
 */
export function useReviewSetting(): { setting: ReviewSetting | null; reload: () => Promise<void> } {
  const [setting, setSetting] = useState<ReviewSetting | null>(null);
  const reload = useCallback(async () => {
    try {
      setSetting(await ok(api.GET('/v1/organization/review')));
    } catch {
      setSetting((current) => current ?? { required: false, approvals: 1, selfApproval: false });
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  useOrganizationEvents((event) => {
    if (event.type === 'review-setting') void reload();
  });
  return { setting, reload };
}

/** How many open change requests wait for this person's review, kept current by the `change-requests` events. */
export function useAwaitingMe(): number | null {
  const [count, setCount] = useState<number | null>(null);
  const reload = useCallback(async () => {
    try {
      const page = await ok(api.GET('/v1/change-requests', { params: { query: { awaitingMe: 'true', limit: 1 } } }));
      setCount(page.total);
    } catch {
      setCount(null);
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  useOrganizationEvents((event) => {
    if (event.type === 'change-requests' || event.type === 'review-setting') void reload();
  });
  return count;
}
