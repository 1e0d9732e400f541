import { request as httpRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Permission } from '../../src/auth/permission';
import { api, createFlag } from '../factories/flags.factory';
import { bearer, createApiKey } from '../factories/organizations.factory';
import { expectApiError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

interface Fixture {
  id?: string;
  flagKey: string;
  action: string;
  actorType: 'apiKey' | 'system';
  actorId: string | null;
  createdAt: string;
  after?: unknown;
}

const KEY_A = '6a2f5e0c-5f6e-4c1b-9d55-000000000001';
const KEY_B = '6a2f5e0c-5f6e-4c1b-9d55-000000000002';
const snapshot = (value: unknown) => ({ name: 'Flag', description: null, type: 'json', value, runtime: 'shared', archived: false });

/** The audit log's filters and its export (README, "Live operations"). */
describe('audit filters and export', () => {
  const { t, org } = useTestApp();

  /** Writes entries as they would have been written, at the given instants (the log's own table, as a superuser). */
  async function insertEntries(entries: Fixture[]): Promise<Fixture[]> {
    const written: Fixture[] = [];
    for (const entry of entries) {
      const { rows } = await t.db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, before, after, created_at)
         VALUES ($1, $2, $3, $4, $5, NULL, $6::jsonb, $7) RETURNING id`,
        [org.id, entry.flagKey, entry.actorType, entry.actorId, entry.action, JSON.stringify(entry.after ?? snapshot(1)), entry.createdAt],
      );
      written.push({ ...entry, id: rows[0].id });
    }
    return written;
  }

  const fixture: Fixture[] = [
    { flagKey: 'xp', action: 'flag.create', actorType: 'apiKey', actorId: KEY_A, createdAt: '2026-12-01T10:00:00.000Z' },
    { flagKey: 'xp', action: 'flag.value.set', actorType: 'apiKey', actorId: KEY_B, createdAt: '2026-12-02T10:00:00.000Z' },
    { flagKey: 'xp', action: 'flag.value.set', actorType: 'system', actorId: null, createdAt: '2026-12-03T18:00:00.000Z' },
    { flagKey: 'sale', action: 'flag.create', actorType: 'apiKey', actorId: KEY_B, createdAt: '2026-12-03T18:00:00.000Z' },
    { flagKey: 'sale', action: 'flag.archive', actorType: 'system', actorId: null, createdAt: '2026-12-04T00:00:00.000Z' },
    { flagKey: 'sale', action: 'flag.unarchive', actorType: 'apiKey', actorId: KEY_A, createdAt: '2026-12-05T09:30:00.000Z' },
    { flagKey: 'xp', action: 'flag.runtime.set', actorType: 'apiKey', actorId: KEY_A, createdAt: '2026-12-06T12:00:00.000Z' },
    { flagKey: 'xp', action: 'flag.delete', actorType: 'apiKey', actorId: KEY_B, createdAt: '2026-12-07T12:00:00.000Z', after: null },
  ];

  const filters = {
    action: 'flag.value.set',
    actorType: 'apiKey',
    actorId: KEY_B,
    flagKey: 'xp',
    from: '2026-12-02T10:00:00Z',
    to: '2026-12-06T12:00:00Z',
  } as const;

  /** What a filter must keep: the oracle the API is held to. */
  function matches(entry: Fixture, query: Partial<Record<keyof typeof filters, string>>): boolean {
    return (
      (query.action === undefined || entry.action === query.action) &&
      (query.actorType === undefined || entry.actorType === query.actorType) &&
      (query.actorId === undefined || entry.actorId === query.actorId) &&
      (query.flagKey === undefined || entry.flagKey === query.flagKey) &&
      (query.from === undefined || Date.parse(entry.createdAt) >= Date.parse(query.from)) &&
      (query.to === undefined || Date.parse(entry.createdAt) < Date.parse(query.to))
    );
  }

  const newestFirst = (entries: Fixture[]) =>
    [...entries].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (b.id! < a.id! ? -1 : 1)).map((entry) => entry.id);

  // Every combination of the six filters (64), each answered exactly as the oracle says, newest first.
  const names = Object.keys(filters) as (keyof typeof filters)[];
  const combinations = Array.from({ length: 2 ** names.length }, (_, mask) => names.filter((_name, bit) => mask & (1 << bit)));

  it('applies every filter and every combination of them, with the right total', async () => {
    const written = await insertEntries(fixture);
    for (const combination of combinations) {
      const query = Object.fromEntries(combination.map((name) => [name, filters[name]]));
      const response = await api(t, org.key)
        .get(`/flags/audit?${new URLSearchParams({ ...query, limit: '100' })}`)
        .expect(200);
      const expected = newestFirst(written.filter((entry) => matches(entry, query)));
      expect({ combination, ids: response.body.results.map((entry: { id: string }) => entry.id) }).toEqual({ combination, ids: expected });
      expect(response.body.total).toBe(expected.length);
    }
  });

  it('filters a real history by flagId with the others, and pages a filtered log', async () => {
    const flag = await createFlag(t, org.key, { key: 'live', type: 'number', value: 0 });
    for (let value = 1; value <= 5; value += 1) {
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value }).expect(200);
    }
    await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed' }).expect(200);
    const page = await api(t, org.key).get(`/flags/audit?flagId=${flag.id}&action=flag.value.set&actorId=${org.keyId}&limit=2&page=2`).expect(200);
    expect(page.body).toMatchObject({ total: 5, page: 2, totalPages: 3 });
    expect(page.body.results.map((entry: { after: { value: number } }) => entry.after.value)).toEqual([3, 2]);
  });

  it.each([
    ['action', 'action=flag.explode', /^action must be one of flag\.create/],
    ['actorType', 'actorType=robot', /^actorType must be one of session, apiKey, system/],
    ['actorId', `actorId=${'x'.repeat(101)}`, /^actorId must be between 1 and 100/],
    ['flagKey', `flagKey=${'k'.repeat(65)}`, /^flagKey must be between 1 and 64/],
    ['from', 'from=yesterday', /^from must be an ISO 8601 instant/],
    ['to', 'to=2026-12-05', /^to must be an ISO 8601 instant/],
    ['from and to', 'from=2026-12-05T00:00:00Z&to=2026-12-05T00:00:00Z', /^from must be before to/],
  ])('answers 400 naming %s, on the page and the export', async (_field, query, message) => {
    expectApiError(await api(t, org.key).get(`/flags/audit?${query}`), 400, 'VALIDATION_ERROR', message);
    expectApiError(await api(t, org.key).get(`/flags/audit/export?${query}`), 400, 'VALIDATION_ERROR', message);
  });

  describe('export', () => {
    it('streams every matching entry as NDJSON, oldest first, exactly as the page shows them', async () => {
      await insertEntries(fixture);
      const page = await api(t, org.key).get('/flags/audit?flagKey=xp&limit=100').expect(200);
      const response = await api(t, org.key).get('/flags/audit/export?format=ndjson&flagKey=xp').expect(200);
      expect(response.headers['content-type']).toBe('application/x-ndjson');
      expect(response.headers['content-disposition']).toBe('attachment; filename="flag-audit.ndjson"');
      expect(response.headers['cache-control']).toBe('no-store');
      const lines = response.text.split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.map((line) => JSON.parse(line))).toEqual([...page.body.results].reverse());
    });

    it('is NDJSON by default, and empty when nothing matches', async () => {
      const response = await api(t, org.key).get('/flags/audit/export?flagKey=none').expect(200);
      expect(response.headers['content-type']).toBe('application/x-ndjson');
      expect(response.text).toBe('');
      const csv = await api(t, org.key).get('/flags/audit/export?format=csv&flagKey=none').expect(200);
      expect(csv.text).toBe('id,createdAt,action,actorType,actorId,flagId,flagKey,before,after\r\n');
    });

    it('writes CSV with the documented columns and RFC 4180 quoting, which parses back to the entries', async () => {
      const tricky = 'He said "no", then\r\nleft';
      const flag = await createFlag(t, org.key, { key: 'quotes', type: 'string', value: 'a,b' });
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: tricky, description: 'x\ny' }).expect(200);
      await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
      const page = await api(t, org.key).get('/flags/audit?flagKey=quotes').expect(200);

      const response = await api(t, org.key).get('/flags/audit/export?format=csv&flagKey=quotes').expect(200);
      expect(response.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
      expect(response.headers['content-disposition']).toBe('attachment; filename="flag-audit.csv"');
      const [header, ...rows] = parseCsv(response.text);
      expect(header).toEqual(['id', 'createdAt', 'action', 'actorType', 'actorId', 'flagId', 'flagKey', 'before', 'after']);
      const entries = [...page.body.results].reverse();
      expect(rows).toEqual(
        entries.map((entry) => [
          entry.id,
          entry.createdAt,
          entry.action,
          entry.actorType,
          entry.actorId ?? '',
          entry.flagId ?? '',
          entry.flagKey ?? '',
          entry.before === null ? '' : JSON.stringify(entry.before),
          entry.after === null ? '' : JSON.stringify(entry.after),
        ]),
      );
      expect(rows[1][8]).toContain(tricky.replace(/\r\n/g, '\\r\\n').replace(/"/g, '\\"'));
    });

    it('answers 400 for an unknown format and 403 without FLAGS_READ', async () => {
      expectApiError(await api(t, org.key).get('/flags/audit/export?format=xlsx'), 400, 'VALIDATION_ERROR', /^format must be one of ndjson, csv/);
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      expectApiError(await api(t, writer.key).get('/flags/audit/export'), 403, 'FORBIDDEN');
    });

    it('exports 20,000 entries in order, with no duplicate across batches, within 50 MB of server memory', async () => {
      // About 3.5 KB each (70 MB in all), and many sharing one timestamp, so batches meet in the middle of ties.
      const big = 'x'.repeat(3_500);
      await t.db.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_key, actor_type, actor_id, action, before, after, created_at)
         SELECT $1, 'bulk', 'system', NULL, 'flag.value.set', NULL,
                jsonb_build_object('name', 'Bulk', 'description', NULL, 'type', 'json', 'value', jsonb_build_object('n', n, 'pad', $2::text),
                                   'runtime', 'shared', 'archived', false),
                timestamptz '2026-12-01T00:00:00Z' + (n / 7) * interval '1 millisecond'
         FROM generate_series(1, 20000) AS n`,
        [org.id, big],
      );
      // Memory the server holds (live after a collection), sampled while it streams: what "not in memory" is about.
      // RSS is reported as well; it also counts garbage that the collector has not come round to yet.
      const LIMIT_MB = 50;
      const held = () => {
        const usage = process.memoryUsage();
        return usage.heapUsed + usage.external + usage.arrayBuffers;
      };
      const live = () => {
        collectGarbage();
        return held();
      };
      const baseline = live();
      const rssBaseline = process.memoryUsage().rss;
      let peak = baseline;
      let rssPeak = rssBaseline;
      let collections = 0;
      // What is held before a collection (garbage included) bounds what is live from above: under the limit, what is
      // live is too, and the sample stands as that bound. Only a sample at the limit costs a full collection (a few
      // hundred ms on a test worker's heap, during which the stream stood still too), and is then exact: every
      // sample's verdict is the one a collection before each would give.
      const sampler = setInterval(() => {
        let sample = held();
        if (sample - baseline >= LIMIT_MB * 1024 * 1024) {
          sample = live();
          collections += 1;
        }
        peak = Math.max(peak, sample);
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }, 50);
      let lines = 0;
      let previous = '';
      const seen = new Set<number>();
      let pending = '';
      try {
        await new Promise<void>((resolve, reject) => {
          const address = t.http.address() as { port: number };
          const call = httpRequest({
            host: '127.0.0.1',
            port: address.port,
            path: '/v1/flags/audit/export?format=ndjson&flagKey=bulk',
            headers: bearer(org.key),
          });
          call.on('response', (response) => {
            expect(response.statusCode).toBe(200);
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              pending += chunk;
              const complete = pending.split('\n');
              pending = complete.pop()!;
              for (const line of complete) {
                // Read without parsing the 3.5 KB of each line, so that the reading adds little to this process's memory.
                const createdAt = /"createdAt":"([^"]+)"/.exec(line)![1];
                const n = Number(/"n":(\d+)/.exec(line)![1]);
                // Oldest first (ties in the order of their ids, which the test does not know).
                if (createdAt < previous) throw new Error(`${createdAt} came after ${previous}`);
                seen.add(n);
                previous = createdAt;
                lines += 1;
              }
            });
            response.on('end', resolve);
            response.on('error', reject);
          });
          call.on('error', reject);
          call.end();
        });
      } finally {
        clearInterval(sampler);
      }
      expect(pending).toBe('');
      expect(lines).toBe(20_000);
      expect(seen.size).toBe(20_000);
      const growthMb = (peak - baseline) / 1024 / 1024;
      const rssGrowthMb = (rssPeak - rssBaseline) / 1024 / 1024;
      console.info(
        `audit export of 20,000 entries (about 70 MB): live memory grew by at most ${growthMb.toFixed(1)} MB at its peak ` +
          `(garbage included, but in the ${collections} samples that came to ${LIMIT_MB} MB and were collected; ` +
          `RSS by ${rssGrowthMb.toFixed(1)} MB)`,
      );
      expect(growthMb).toBeLessThan(LIMIT_MB);
    });
  });
});

/** A full collection on demand, without starting node with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** RFC 4180, for the test's own reading: quoted fields may hold quotes (doubled), commas and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index];
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (character === '"') quoted = false;
      else field += character;
    } else if (character === '"') quoted = true;
    else if (character === ',') {
      row.push(field);
      field = '';
    } else if (character === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index += 1;
    } else field += character;
  }
  if (field !== '' || row.length > 0) throw new Error('CSV does not end with CRLF');
  return rows;
}
