import { type ChangeEvent, type FormEvent, useCallback, useRef, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field } from '../components/Field';
import { Layout } from '../components/Layout';
import { useSignedIn } from '../session';
import { Pager } from '../components/Pager';
import { fileLabel, uploadName } from '../lib/file-names';

type Item = components['schemas']['StorageItemDto'];
type Stats = components['schemas']['StorageStatsDto'];
type Kind = Item['kind'];
const KINDS: Kind[] = ['image', 'video', 'audio', 'document'];

export function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = count / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Storage: usage against the allocation by kind, the files as a gallery, uploads with progress, delete and purge. */
export function Storage() {
  const session = useSignedIn();
  const [kind, setKind] = useState<Kind | ''>('');
  const [page, setPage] = useState(1);
  const [deleting, setDeleting] = useState<Item | null>(null);
  const read = useCallback(async () => {
    const [stats, items] = await Promise.all([
      ok(api.GET('/v1/storage')),
      ok(api.GET('/v1/storage/items', { params: { query: { page, limit: 12, ...(kind ? { kind } : {}) } } })),
    ]);
    return { stats, items };
  }, [kind, page]);
  const { data, problem: readProblem, reload: load } = useLatestRead(read);
  const stats = data?.stats ?? null;
  const items = data?.items ?? null;
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem | null>(null);
  const problem = deleteProblem ?? readProblem;
  useOrganizationEvents((event) => {
    if (event.type === 'storage') void load();
  });

  const remove = async (item: Item) => {
    setDeleting(null);
    setDeleteProblem(null);
    try {
      await ok(api.DELETE('/v1/storage/{fileId}', { params: { path: { fileId: item.id } } }));
      await load();
    } catch (error) {
      setDeleteProblem(error as ApiProblem);
    }
  };

  const canWrite = session.canWrite;
  return (
    <Layout title="Storage">
      {problem && (
        <p className="error" role="alert">
          {problem.explain()}
        </p>
      )}
      {stats && <Usage stats={stats} />}
      {canWrite && <Upload onUploaded={() => void load()} />}
      <section aria-labelledby="files-title">
        <h2 id="files-title">Files</h2>
        <label className="check">
          <span>Kind</span>
          <select
            value={kind}
            onChange={(event) => {
              setPage(1);
              setKind(event.target.value as Kind | '');
            }}
          >
            <option value="">All kinds</option>
            {KINDS.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
        {items && items.items.length === 0 && <p>No files{kind ? ` of kind ${kind}` : ''}.</p>}
        <ul className="gallery">
          {items?.items.map((item) => (
            <li key={item.id}>
              <figure>
                {item.kind === 'image' && item.state === 'complete' ? (
                  <img src={`/c/${session.organization!.id}/${item.id}`} alt={fileLabel(item)} loading="lazy" />
                ) : (
                  <div className="file-icon" aria-hidden="true">
                    {item.kind}
                  </div>
                )}
                <figcaption>
                  {item.fileName ? (
                    <span className="file-name" title={item.fileName}>
                      {item.fileName}
                    </span>
                  ) : (
                    // No name: its kind and date are what the file is called.
                    <time className="file-name" dateTime={item.createdAt}>
                      {fileLabel(item)}
                    </time>
                  )}
                  {item.kind}, {bytes(item.size)}
                  {item.state === 'pending' ? ' (uploading)' : ''}
                  {item.fileName && (
                    <>
                      <br />
                      <time dateTime={item.createdAt}>{new Date(item.createdAt).toLocaleString()}</time>
                    </>
                  )}
                </figcaption>
              </figure>
              {canWrite && (
                <button type="button" className="danger" onClick={() => setDeleting(item)}>
                  Delete<span className="visually-hidden"> file {fileLabel(item)}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
        {items && <Pager page={items.page} totalPages={items.totalPages} onPage={setPage} />}
      </section>
      {canWrite && <Purge onPurged={() => void load()} />}
      <ConfirmDialog
        open={deleting !== null}
        title="Delete this file?"
        confirm="Delete the file"
        onCancel={() => setDeleting(null)}
        onConfirm={() => void remove(deleting!)}
      >
        <p>{deleting ? <strong>{fileLabel(deleting)}</strong> : null} The CDN stops serving it and its space is freed. This cannot be undone.</p>
      </ConfirmDialog>
    </Layout>
  );
}

/** Usage against the allocation, and the share of each kind, as a bar chart in plain SVG (with the figures as text). */
function Usage({ stats }: { stats: Stats }) {
  const max = Math.max(stats.totalStorage, stats.usedStorage, 1);
  const { breakdown } = stats;
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <p>
        <strong>{bytes(stats.usedStorage)}</strong> used of {bytes(stats.totalStorage)}
        {stats.overageStorage > 0 ? `, ${bytes(stats.overageStorage)} over the allocation` : ''}
      </p>
      <svg className="chart" viewBox="0 0 400 130" role="img" aria-label={`Storage used by kind, of ${bytes(stats.totalStorage)}`}>
        {KINDS.map((kind, index) => {
          const usage = breakdown.find((entry) => entry.kind === kind);
          const width = Math.max(usage && usage.size > 0 ? 2 : 0, (400 - 90) * ((usage?.size ?? 0) / max));
          return (
            <g key={kind} transform={`translate(0, ${index * 32})`}>
              <text x="0" y="18" className="chart-label">
                {kind}
              </text>
              <rect x="80" y="4" width={400 - 90} height="20" className="chart-track" />
              <rect x="80" y="4" width={width} height="20" className="chart-bar" />
            </g>
          );
        })}
      </svg>
      <table className="flags">
        <caption className="visually-hidden">Usage by kind</caption>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">Files</th>
            <th scope="col">Size</th>
          </tr>
        </thead>
        <tbody>
          {KINDS.map((kind) => {
            const usage = breakdown.find((entry) => entry.kind === kind);
            return (
              <tr key={kind}>
                <td>{kind}</td>
                <td>{usage?.count ?? 0}</td>
                <td>{bytes(usage?.size ?? 0)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

/**
 * An upload through a signed URL, with the browser's own progress events (fetch has none for uploads). One at a time:
 * the button is disabled while one runs, and a second submit before React has drawn that (a double click) is
 * dropped by the ref; a finished upload clears the choice, so the same file is not sent twice by accident.
 */
function Upload({ onUploaded }: { onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const running = useRef(false);
  const input = useRef<HTMLInputElement | null>(null);

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (!file || running.current) return;
    running.current = true;
    setBusy(true);
    setProblem(null);
    setDone(null);
    try {
      const contentType = file.type || 'application/octet-stream';
      const fileName = uploadName(file.name);
      const signed = await ok(
        api.GET('/v1/storage/signed-url', { params: { query: { contentType, size: file.size, ...(fileName ? { fileName } : {}) } } }),
      );
      setProgress(0);
      await new Promise<void>((resolve, reject) => {
        const request = new XMLHttpRequest();
        request.open('PUT', signed.url);
        request.setRequestHeader('Content-Type', contentType);
        request.upload.onprogress = (progressEvent) => progressEvent.lengthComputable && setProgress(progressEvent.loaded / progressEvent.total);
        request.onload = () => {
          if (request.status >= 200 && request.status < 300) resolve();
          else {
            const body = JSON.parse(request.responseText || '{}') as { error?: { message?: string } };
            reject(new ApiProblem(request.status, 'UPLOAD_REFUSED', body.error?.message ?? `The upload was refused (${request.status})`));
          }
        };
        request.onerror = () => reject(new ApiProblem(0, 'NETWORK', 'The upload did not reach the service; try again.'));
        request.send(file);
      });
      setProgress(1);
      setDone(`${file.name} uploaded.`);
      setFile(null);
      if (input.current) input.current.value = '';
      onUploaded();
    } catch (error) {
      setProgress(null);
      setProblem((error as ApiProblem).explain());
    } finally {
      running.current = false;
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a file</h2>
      <form onSubmit={upload} noValidate className="inline-form">
        <Field label="File" error={problem}>
          {(props) => (
            <input
              {...props}
              ref={input}
              type="file"
              disabled={busy}
              onChange={(event: ChangeEvent<HTMLInputElement>) => setFile(event.target.files?.[0] ?? null)}
            />
          )}
        </Field>
        <button type="submit" disabled={!file || busy} aria-busy={busy}>
          {busy ? 'Uploading…' : 'Upload'}
        </button>
      </form>
      {progress !== null && (
        <progress max={1} value={progress} aria-label="Upload progress">
          {Math.round(progress * 100)} %
        </progress>
      )}
      {done && <p role="status">{done}</p>}
    </section>
  );
}

/** A purge: the dry run's count first, then the real one after a confirmation that repeats it. */
function Purge({ onPurged }: { onPurged: () => void }) {
  const [kind, setKind] = useState<Kind | ''>('');
  const [count, setCount] = useState<number | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const body = (dryRun: boolean) => ({ dryRun, ...(kind ? { kind } : {}) });

  const dryRun = async (event: FormEvent) => {
    event.preventDefault();
    setResult(null);
    setProblem(null);
    try {
      setCount((await ok(api.DELETE('/v1/storage/purge', { body: body(true) }))).purgedCount);
    } catch (error) {
      setProblem((error as ApiProblem).explain());
    }
  };
  const purge = async () => {
    setCount(null);
    try {
      setResult((await ok(api.DELETE('/v1/storage/purge', { body: body(false) }))).message);
      onPurged();
    } catch (error) {
      setProblem((error as ApiProblem).explain());
    }
  };
  return (
    <section aria-labelledby="purge-title">
      <h2 id="purge-title">Purge</h2>
      <form onSubmit={dryRun} noValidate className="inline-form">
        <Field label="Files to purge" error={problem}>
          {(props) => (
            <select {...props} value={kind} onChange={(event) => setKind(event.target.value as Kind | '')}>
              <option value="">Every kind</option>
              {KINDS.map((option) => (
                <option key={option} value={option}>
                  {option}
                </option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit">Count what would be purged</button>
      </form>
      {result && <p role="status">{result}</p>}
      <ConfirmDialog
        open={count !== null}
        title={`Purge ${count} file${count === 1 ? '' : 's'}?`}
        confirm={`Purge ${count} file${count === 1 ? '' : 's'}`}
        onCancel={() => setCount(null)}
        onConfirm={() => void purge()}
      >
        <p>The dry run found {count === 1 ? '1 file' : `${count} files`}. Purged files cannot be recovered.</p>
      </ConfirmDialog>
    </section>
  );
}
