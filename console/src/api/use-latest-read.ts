import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiProblem } from './client';

/**
 * What a page shows of a read that its inputs (a page number, filters, the organization) change: `read` runs when it
 * changes (a new `useCallback`) and on `reload()` (an event, the page's own change), and only the latest read's answer
 * is shown. An earlier read that answers later (page 1, slow, after page 2 was asked for; a search typed further) is
 * dropped, so a list never shows rows that do not match the page number or filters beside it. A failed read keeps
 * what was shown and sets `problem`; the next answer clears it.
 */
export function useLatestRead<T>(read: () => Promise<T>): { data: T | null; problem: ApiProblem | null; reload: () => Promise<void> } {
  const [state, setState] = useState<{ data: T | null; problem: ApiProblem | null }>({ data: null, problem: null });
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const mine = (latest.current += 1);
    try {
      const data = await read();
      if (mine === latest.current) setState({ data, problem: null });
    } catch (error) {
      if (mine === latest.current) setState((current) => ({ data: current.data, problem: error as ApiProblem }));
    }
  }, [read]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { ...state, reload };
}
