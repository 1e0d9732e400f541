'use strict';
/**
 * The baseline of the config-poll benchmark: a bare node:http server doing the per-request work the
 * service's poll cannot avoid, and nothing else:
 *   - the raw Authorization header -> Map lookup of the principal, as the service's key cache does; on a
 *     miss, bearer token -> sha256 hex -> Map lookup, then the header is remembered (401 when missing or
 *     unknown, 403 without FLAGS_READ);
 *   - If-None-Match compared with the current ETag in every form the service accepts (W/"h", "h", h, lists, *);
 *   - 304 with ETag + Cache-Control, or 200 with a pre-serialized Buffer of the same payload and headers.
 *
 * Run as a process: `node bench/bare-server.js <config.json>`, where the file holds
 *   { port, host?, etag: 'W/"<hash>"', payloadFile, keys: { "<sha256 hex>": { organizationId, keyId, permissions } } }
 * It prints one line `{"listening":<port>}` on stdout once it accepts connections.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const http = require('node:http');

const CONFIG_PATH = '/v1/flags/config';
const CACHE_CONTROL = 'no-cache, must-revalidate';
const CONTENT_TYPE = 'application/json; charset=utf-8';
const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

/** The bare hash of an ETag in any accepted form: W/"h", "h" or h. */
function opaqueTag(tag) {
  let value = tag.trim();
  if (value.startsWith('W/')) value = value.slice(2);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return value;
}

/** True when If-None-Match names the current representation (weak comparison, as for GET). */
function ifNoneMatchMatches(header, hash) {
  if (!header) return false;
  for (const candidate of header.split(',')) {
    const trimmed = candidate.trim();
    if (trimmed === '*' || (trimmed !== '' && opaqueTag(trimmed) === hash)) return true;
  }
  return false;
}

function errorBody(status, error, message) {
  return Buffer.from(JSON.stringify({ statusCode: status, error, message }));
}

/**
 * @param {{ etag: string, payload: Buffer, keys: Map<string, { permissions: string[] }> }} state
 */
function createBareServer(state) {
  const hash = opaqueTag(state.etag);
  const payload = state.payload;
  const payloadLength = String(payload.length);
  const unauthorized = errorBody(401, 'UNAUTHORIZED', 'Missing or invalid API key');
  const forbidden = errorBody(403, 'FORBIDDEN', 'This API key lacks the FLAGS_READ permission');
  const notFound = errorBody(404, 'NOT_FOUND', 'Not found');

  /** Raw Authorization header -> principal, for headers whose hash was found (bounded). */
  const byHeader = new Map();
  const principalOf = (authorization) => {
    const known = byHeader.get(authorization);
    if (known !== undefined) return known;
    const match = BEARER.exec(authorization);
    const principal = match && state.keys.get(createHash('sha256').update(match[1]).digest('hex'));
    if (principal && byHeader.size < 1000) byHeader.set(authorization, principal);
    return principal;
  };

  const send = (res, status, body) => {
    res.writeHead(status, { 'Content-Type': CONTENT_TYPE, 'Content-Length': String(body.length) });
    res.end(body);
  };

  return http.createServer((req, res) => {
    const queryAt = req.url.indexOf('?');
    const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
    if (req.method !== 'GET' || path !== CONFIG_PATH) return send(res, 404, notFound);

    const principal = principalOf(req.headers.authorization || '');
    if (!principal) return send(res, 401, unauthorized);
    if (!principal.permissions.includes('FLAGS_READ')) return send(res, 403, forbidden);

    if (ifNoneMatchMatches(req.headers['if-none-match'], hash)) {
      res.writeHead(304, { ETag: state.etag, 'Cache-Control': CACHE_CONTROL });
      return res.end();
    }
    res.writeHead(200, {
      ETag: state.etag,
      'Cache-Control': CACHE_CONTROL,
      'Content-Type': CONTENT_TYPE,
      'Content-Length': payloadLength,
    });
    res.end(payload);
  });
}

module.exports = { createBareServer, ifNoneMatchMatches, opaqueTag };

if (require.main === module) {
  const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const server = createBareServer({
    etag: config.etag,
    payload: readFileSync(config.payloadFile),
    keys: new Map(Object.entries(config.keys)),
  });
  server.listen(config.port, config.host || '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
