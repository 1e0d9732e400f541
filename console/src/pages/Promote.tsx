import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import type { components } from '../../.generated/api';
import { ImportReport } from '../components/ImportReport';
import { Layout } from '../components/Layout';
import { same } from '../lib/diff';
import { preview } from '../lib/flag-values';
import { useSignedIn } from '../session';
import { defaultTitle, RequestedNotice, RequestFields, ReviewNotice, useTargetReview } from './PromoteReview';

type Exported = components['schemas']['ExportedFlagDto'];
type Report = components['schemas']['ImportReportDto'];
type ChangeRequest = components['schemas']['ChangeRequestDto'];

const inOrganization = (organizationId: string) => ({ headers: { 'X-Organization-Id': organizationId } });

/** What the target holds of a flag compared with the source: new there, different, or the same. */
function stateOf(source: Exported, target: Exported | undefined): 'new' | 'different' | 'same' {
  if (!target) return 'new';
  const { key: _a, ...left } = source;
  const { key: _b, ...right } = target;
  return same({ ...left, description: left.description ?? null }, { ...right, description: right.description ?? null }) ? 'same' : 'different';
}

/**
 * Environments: the flags of this organization (staging, say) beside another of the person's organizations
 * (production), and the selected ones promoted through a dry run's report first, then the import. When the target
 * requires review, the import is a change request there instead (`requestReview: true`), titled by the person.
 */
export function Promote() {
  const session = useSignedIn();
  const source = session.organization!;
  const targets = session.organizations.filter((org) => org.id !== source.id && (org.role === 'editor' || org.role === 'admin'));
  const [targetId, setTargetId] = useState(targets[0]?.id ?? '');
  const target = targets.find((org) => org.id === targetId);
  const [sourceFlags, setSourceFlags] = useState<Exported[]>([]);
  const [targetFlags, setTargetFlags] = useState<Map<string, Exported>>(new Map());
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [report, setReport] = useState<{ report: Report; dryRun: boolean } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const review = useTargetReview(targetId);
  const reviewRequired = review.setting?.required === true;
  // Null: the title follows the selection ("Promote 2 flags from Staging") until the person writes their own.
  const [title, setTitle] = useState<string | null>(null);
  const [description, setDescription] = useState('');
  const [requested, setRequested] = useState<{ request: ChangeRequest; targetId: string; targetName: string } | null>(null);

  const load = async () => {
    if (!targetId) return;
    try {
      const [from, to] = await Promise.all([
        ok(api.GET('/v1/flags/export', inOrganization(source.id))),
        ok(api.GET('/v1/flags/export', inOrganization(targetId))),
      ]);
      setSourceFlags(from.flags);
      setTargetFlags(new Map(to.flags.map((flag) => [flag.key, flag])));
      setSelected(new Set());
      setReport(null);
      setRequested(null);
    } catch (error) {
      setProblem((error as ApiProblem).explain());
    }
  };
  useEffect(() => {
    void load();
    // load reads only these two.
  }, [targetId, source.id]);

  const rows = useMemo(
    () => sourceFlags.map((flag) => ({ flag, target: targetFlags.get(flag.key), state: stateOf(flag, targetFlags.get(flag.key)) })),
    [sourceFlags, targetFlags],
  );

  // The promotion, direct or requested, comes after a dry run that the target refuses nothing of.
  const previewed = selected.size > 0 && report?.dryRun === true && report.report.refused.length === 0;
  const flags = () => sourceFlags.filter((flag) => selected.has(flag.key));
  const requestTitle = title ?? defaultTitle(selected.size, source.name);

  const run = async (dryRun: boolean) => {
    setProblem(null);
    const body = { flags: flags(), dryRun } as never;
    const { data, error, response } = await api.POST('/v1/flags/import', { body, ...inOrganization(targetId) });
    // Without requestReview the import answers its report (200); a change request (201) is what requestReview asks for.
    if (response.ok && data && 'created' in data) {
      setReport({ report: data, dryRun });
      if (!dryRun) await load().then(() => setReport({ report: data, dryRun }));
    } else if (response.status === 409 && error && typeof error === 'object' && 'refused' in error) {
      setReport({ report: error as unknown as Report, dryRun });
      setProblem('The target refuses some flags (see below): nothing was imported.');
    } else if (response.status === 403 && (error as { code?: string } | undefined)?.code === 'REVIEW_REQUIRED') {
      // Review was turned on in the target since the page read its setting: read it again, and the page offers the request.
      review.reload();
      setProblem(`Nothing was promoted: ${target?.name} now requires review. Request review instead.`);
    } else {
      setProblem((error as { message?: string } | undefined)?.message ?? `The import was refused (${response.status}).`);
    }
  };

  /** The promotion as a change request in the target: nothing changes there until it is approved and applied. */
  const requestReview = async (event: FormEvent) => {
    event.preventDefault();
    if (!reviewRequired || !previewed) return;
    setProblem(null);
    const body = {
      flags: flags(),
      requestReview: true,
      title: requestTitle.trim(),
      ...(description.trim() ? { description: description.trim() } : {}),
    };
    const { data, error, response } = await api.POST('/v1/flags/import', { body: body as never, ...inOrganization(targetId) });
    if (response.ok && data && 'id' in data) {
      setRequested({ request: data, targetId, targetName: target?.name ?? '' });
      setSelected(new Set());
      setReport(null);
      setTitle(null);
      setDescription('');
    } else {
      setProblem((error as { message?: string } | undefined)?.message ?? `The request was refused (${response.status}).`);
    }
  };

  if (targets.length === 0) {
    return (
      <Layout title="Promote flags">
        <p>To promote flags you need another organization (production, say) where you are an editor or admin.</p>
      </Layout>
    );
  }
  return (
    <Layout title="Promote flags">
      <p>
        From <strong>{source.name}</strong> to{' '}
        <select aria-label="Target organization" value={targetId} onChange={(event) => setTargetId(event.target.value)}>
          {targets.map((org) => (
            <option key={org.id} value={org.id}>
              {org.name}
            </option>
          ))}
        </select>
      </p>
      {reviewRequired && review.setting && <ReviewNotice targetName={target?.name ?? ''} setting={review.setting} />}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <table className="flags">
        <caption className="visually-hidden">
          Flags of {source.name} beside {target?.name}
        </caption>
        <thead>
          <tr>
            <th scope="col">Promote</th>
            <th scope="col">Key</th>
            <th scope="col">{source.name}</th>
            <th scope="col">{target?.name}</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ flag, target: there, state }) => (
            <tr key={flag.key}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Promote ${flag.key}`}
                  checked={selected.has(flag.key)}
                  disabled={state === 'same'}
                  onChange={(event) =>
                    setSelected((current) => {
                      const next = new Set(current);
                      if (event.target.checked) next.add(flag.key);
                      else next.delete(flag.key);
                      return next;
                    })
                  }
                />
              </td>
              <td>{flag.key}</td>
              <td>
                <code>{preview(flag.value, 40)}</code>
                {flag.rules?.length ? ` + ${flag.rules.length} rules` : ''}
              </td>
              <td>{there ? <code>{preview(there.value, 40)}</code> : '(none)'}</td>
              <td>{state === 'new' ? `new in ${target?.name}` : state}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={(event) => void requestReview(event)} noValidate>
        {reviewRequired && (
          <RequestFields
            targetName={target?.name ?? ''}
            title={requestTitle}
            description={description}
            onTitle={setTitle}
            onDescription={setDescription}
          />
        )}
        <div className="actions">
          <button type="button" disabled={selected.size === 0} onClick={() => void run(true)}>
            Preview the promotion (dry run)
          </button>
          {reviewRequired ? (
            <button type="submit" className="primary" disabled={!previewed || requestTitle.trim() === ''}>
              Request review
            </button>
          ) : (
            <button type="button" className="primary" disabled={!previewed || review.setting === null} onClick={() => void run(false)}>
              Promote {selected.size} flag{selected.size === 1 ? '' : 's'}
            </button>
          )}
        </div>
      </form>
      {requested && (
        <RequestedNotice
          request={requested.request}
          targetName={requested.targetName}
          onOpen={() => session.switchOrganization(requested.targetId, `/change-requests/${requested.request.id}`)}
        />
      )}
      {report && (
        <section aria-labelledby="report-title" aria-live="polite">
          <h2 id="report-title">{report.dryRun ? 'What the promotion would do' : 'Promoted'}</h2>
          <ImportReport report={report.report} />
        </section>
      )}
    </Layout>
  );
}
