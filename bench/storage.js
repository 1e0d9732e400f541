'use strict';
/**
 * Storage benchmark: a 100 MB file uploaded (pre-allocated PUT) and downloaded (GET mediaUrl) through a
 * running service, against writing and reading the same file directly on disk in the same run, and the
 * server's peak RSS during the upload (must stay under RSS before + 64 MB: uploads stream).
 *
 * Run by bench/run.js (`npm run bench`, or `BENCH_ONLY=storage npm run bench` for this part alone).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const os = require('node:os');
const { join } = require('node:path');
const { pipeline } = require('node:stream/promises');

const FILE_BYTES = 100 * 1024 * 1024;
const CHUNK = 1024 * 1024;
const RSS_BUDGET_BYTES = 64 * 1024 * 1024;
const MB = 1024 * 1024;

/** The whole benchmark; returns its figures. */
async function runStorageBench({ baseUrl, adminToken, serverPid, log = () => undefined, tmpDir }) {
  const workDir = fs.mkdtempSync(join(tmpDir || os.tmpdir(), 'flagstore-storage-bench-'));
  try {
    const source = join(workDir, 'source.bin');
    await writeRandomFile(source, FILE_BYTES);
    log(`storage: ${FILE_BYTES / MB} MB test file ready`);

    // Direct disk, the baseline: stream the file into a new one (fsynced, as the local driver does), read it back.
    const diskCopy = join(workDir, 'disk-copy.bin');
    const diskWrite = await timed(async () => {
      await pipeline(fs.createReadStream(source, { highWaterMark: CHUNK }), fs.createWriteStream(diskCopy, { flush: true }));
    });
    const diskRead = await timed(() => drain(fs.createReadStream(diskCopy, { highWaterMark: CHUNK })));

    const key = await createOrganizationKey(baseUrl, adminToken);
    const signed = await getJson(`${baseUrl}/v1/storage/signed-url?contentType=video%2Fmp4&size=${FILE_BYTES}`, {
      Authorization: `Bearer ${key}`,
    });

    const rssBefore = serverPid ? readRss(serverPid) : null;
    let rssPeak = rssBefore;
    const sampler = serverPid
      ? setInterval(() => {
          const rss = readRss(serverPid);
          if (rss !== null && (rssPeak === null || rss > rssPeak)) rssPeak = rss;
        }, 10)
      : null;
    let upload;
    try {
      upload = await timed(() => putFile(signed.url, source, 'video/mp4'));
    } finally {
      if (sampler) clearInterval(sampler);
    }
    if (upload.result.status !== 200) throw new Error(`upload answered ${upload.result.status}: ${upload.result.body}`);
    if (serverPid) {
      const rss = readRss(serverPid);
      if (rss !== null && (rssPeak === null || rss > rssPeak)) rssPeak = rss;
    }

    const download = await timed(() => getStream(signed.mediaUrl));
    if (download.result !== FILE_BYTES) throw new Error(`download returned ${download.result} bytes, expected ${FILE_BYTES}`);

    const mbps = (ms) => round(FILE_BYTES / MB / (ms / 1000));
    const figures = {
      fileBytes: FILE_BYTES,
      uploadMBps: mbps(upload.ms),
      diskWriteMBps: mbps(diskWrite.ms),
      uploadToDiskWriteRatio: round(diskWrite.ms / upload.ms, 3),
      downloadMBps: mbps(download.ms),
      diskReadMBps: mbps(diskRead.ms),
      downloadToDiskReadRatio: round(diskRead.ms / download.ms, 3),
      rssBeforeMB: rssBefore === null ? null : round(rssBefore / MB),
      rssPeakDuringUploadMB: rssPeak === null ? null : round(rssPeak / MB),
      rssGrowthMB: rssBefore === null || rssPeak === null ? null : round((rssPeak - rssBefore) / MB),
      rssBudgetMB: RSS_BUDGET_BYTES / MB,
      rssWithinBudget: rssBefore === null || rssPeak === null ? null : rssPeak < rssBefore + RSS_BUDGET_BYTES,
    };
    log(
      `storage: upload ${figures.uploadMBps} MB/s vs disk write ${figures.diskWriteMBps} MB/s (ratio ${figures.uploadToDiskWriteRatio}); ` +
        `download ${figures.downloadMBps} MB/s vs disk read ${figures.diskReadMBps} MB/s (ratio ${figures.downloadToDiskReadRatio}); ` +
        `server RSS ${figures.rssBeforeMB} -> peak ${figures.rssPeakDuringUploadMB} MB ` +
        `(${figures.rssWithinBudget === null ? 'not sampled' : figures.rssWithinBudget ? 'within' : 'OVER'} the +64 MB budget)`,
    );
    return figures;
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

async function writeRandomFile(path, size) {
  const out = fs.createWriteStream(path);
  for (let written = 0; written < size; written += CHUNK) {
    if (!out.write(randomBytes(Math.min(CHUNK, size - written)))) await new Promise((done) => out.once('drain', done));
  }
  await new Promise((done, fail) => out.end((error) => (error ? fail(error) : done())));
}

async function timed(run) {
  const start = process.hrtime.bigint();
  const result = await run();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

async function drain(stream) {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.length;
  return bytes;
}

/** VmRSS of a process in bytes, or null where /proc is not available. */
function readRss(pid) {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function round(value, digits = 1) {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function client(url) {
  return new URL(url).protocol === 'https:' ? https : http;
}

function send(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((done, fail) => {
    const request = client(url).request(url, { method, headers }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', fail);
    });
    request.on('error', fail);
    if (body && typeof body.pipe === 'function') body.pipe(request);
    else request.end(body);
  });
}

async function getJson(url, headers) {
  const response = await send(url, { headers });
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${response.body}`);
  return JSON.parse(response.body);
}

async function createOrganizationKey(baseUrl, adminToken) {
  const headers = { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' };
  const organization = await send(`${baseUrl}/v1/admin/organizations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'storage bench' }),
  });
  if (organization.status !== 201) throw new Error(`creating the organization answered ${organization.status}: ${organization.body}`);
  const { id } = JSON.parse(organization.body);
  const key = await send(`${baseUrl}/v1/admin/organizations/${id}/api-keys`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'bench', permissions: ['STORAGE_READ', 'STORAGE_WRITE'] }),
  });
  if (key.status !== 201) throw new Error(`creating the API key answered ${key.status}: ${key.body}`);
  return JSON.parse(key.body).key;
}

function putFile(url, path, contentType) {
  const size = fs.statSync(path).size;
  return send(url, {
    method: 'PUT',
    headers: { 'Content-Type': contentType, 'Content-Length': String(size) },
    body: fs.createReadStream(path, { highWaterMark: CHUNK }),
  });
}

function getStream(url) {
  return new Promise((done, fail) => {
    client(url)
      .get(url, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return fail(new Error(`GET ${url} answered ${response.statusCode}`));
        }
        drain(response).then(done, fail);
      })
      .on('error', fail);
  });
}

/** Standalone: start the built service in a temporary DATA_DIR, run, stop it. */
module.exports = { runStorageBench };
