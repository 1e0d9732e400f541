import { get as httpGet, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { isEmail } from 'class-validator';

/**
 * The contract check: every answer the real app gives during the e2e suite is validated against the
 * OpenAPI document that same app serves at /docs-json.
 *
 * - The operation (method and path template) must be in the document, and so must the status it answered.
 * - A JSON body must match the documented schema of that status; any other body must have a documented
 *   media type.
 * - A request no operation matches may only be answered 404 with one of the documented error bodies
 *   (that is an unknown route, not an undocumented one), or with the body parser's 400/413/415, which come
 *   before routing.
 *
 * Exchanges are recorded on the server side, whatever client made them (supertest, fetch, the S3-less upload
 * helpers), and checked after each test (test/support/contract-check.ts), so a mismatch fails the test that
 * caused it. Two things are not operations and are not checked: web pages (Swagger's own /docs routes, the console's
 * pages and assets under /console, tested in console-serving.e2e-spec.ts), and CORS
 * preflights (OPTIONS with Access-Control-Request-Method), which the CORS tests assert header by header.
 */

export interface Exchange {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  body: Buffer;
  /** The body was longer than the recorder keeps; only JSON bodies are ever that checked, and none is so big. */
  truncated: boolean;
}

type MediaTypes = Record<string, { schema?: object }>;
interface Operation {
  operationId?: string;
  responses: Record<string, { content?: MediaTypes }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, object> };
}

const MAX_RECORDED_BYTES = 4 * 1024 * 1024;

const recorders = new Set<ExchangeRecorder>();

/** Records what `server` answers, until the app closes; verifyContract() checks and clears what it recorded. */
export function recordExchanges(server: Server): ExchangeRecorder {
  const recorder = new ExchangeRecorder(server);
  recorders.add(recorder);
  return recorder;
}

/** Checks every exchange recorded since the last call, across the apps this test file runs. */
export async function verifyContract(): Promise<void> {
  const failures: string[] = [];
  for (const recorder of recorders) failures.push(...(await recorder.verify()));
  if (failures.length > 0) {
    throw new Error(
      `${failures.length} answer(s) do not match the OpenAPI document served at /docs-json:\n` + failures.map((line) => `  - ${line}`).join('\n'),
    );
  }
}

export class ExchangeRecorder {
  private exchanges: Exchange[] = [];
  private contract?: Contract;

  constructor(private readonly server: Server) {
    const listeners = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      this.capture(request, response);
      for (const listener of listeners) listener.call(server, request, response);
    });
  }

  /** Checks and forgets what was recorded so far; the app stops being recorded once `final`. */
  async verify(final = false): Promise<string[]> {
    if (final) recorders.delete(this);
    const exchanges = this.exchanges;
    this.exchanges = [];
    if (exchanges.length === 0) return [];
    this.contract ??= new Contract(await this.document());
    return exchanges.map((exchange) => this.contract!.check(exchange)).filter((failure): failure is string => failure !== undefined);
  }

  private capture(request: IncomingMessage, response: ServerResponse): void {
    // As it came: a mounted middleware (Swagger UI's files under /docs) rewrites request.url while it answers.
    const url = request.url ?? '/';
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      if (truncated) return; // a long stream's later chunks are not even converted
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array);
      if (size + buffer.length > MAX_RECORDED_BYTES) {
        truncated = true;
        return;
      }
      size += buffer.length;
      chunks.push(buffer);
    };
    // The lean config poll passes its headers to writeHead, where getHeader() does not see them.
    let contentType: string | undefined;
    const writeHead = response.writeHead;
    response.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const headers = args.find((arg, index) => index > 0 && typeof arg === 'object' && arg !== null) as Record<string, unknown> | undefined;
      const given = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type');
      if (given) contentType = String(given[1]);
      return (writeHead as (...args: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    const write = response.write;
    const end = response.end;
    response.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    response.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
    response.once('finish', () => {
      if (isPageRoute(url, request.method) || isPreflight(request)) return;
      const header = response.getHeader('content-type');
      this.exchanges.push({
        method: request.method ?? 'GET',
        url,
        status: response.statusCode,
        contentType: contentType ?? (header === undefined ? undefined : String(header)),
        body: Buffer.concat(chunks),
        truncated,
      });
    });
  }

  private document(): Promise<OpenApiDocument> {
    const { port } = this.server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const call = httpGet({ host: '127.0.0.1', port, path: '/docs-json', timeout: 10_000 }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OpenApiDocument);
          } catch (error) {
            reject(error as Error);
          }
        });
      });
      call.on('timeout', () => call.destroy(new Error('GET /docs-json did not answer within 10 s')));
      call.on('error', reject);
    });
  }
}

/** Web pages, not API operations: Swagger's own, and the console's pages and assets (with the redirect of `/`). */
function isPageRoute(url: string, method: string | undefined): boolean {
  const path = url.split('?')[0];
  if (path === '/docs' || path.startsWith('/docs/') || path === '/docs-json') return true;
  const read = method === 'GET' || method === 'HEAD';
  return read && (path === '/' || path === '/console' || path.startsWith('/console/'));
}

function isPreflight(request: IncomingMessage): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/** One compiled document: path templates as patterns, schemas compiled once each. */
export class Contract {
  private readonly ajv: Ajv;
  private readonly routes: { pattern: RegExp; template: string; operations: Record<string, Operation> }[];
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly errorSchemas: string[];

  constructor(private readonly document: OpenApiDocument) {
    // OpenAPI 3.0 schemas are JSON Schema with extras (example, nullable, ...): strict mode would refuse them.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    for (const format of ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']) this.ajv.addFormat(format, true);
    // JSON Schema's internationalised email (RFC 6531), which ajv-formats lacks: a local part of any Unicode letters.
    this.ajv.addFormat('idn-email', (value: string) => isEmail(value));
    this.ajv.addSchema(withNullAsJsonSchema(document) as object, 'openapi');
    this.routes = Object.entries(document.paths).map(([template, operations]) => ({ template, operations, pattern: patternOf(template) }));
    this.errorSchemas = ['ApiErrorDto', 'StorageErrorDto'].filter((name) => document.components?.schemas?.[name]);
  }

  check(exchange: Exchange): string | undefined {
    const path = exchange.url.split('?')[0];
    const label = `${exchange.method} ${path} → ${exchange.status}`;
    const route = this.routes.find((candidate) => candidate.pattern.test(path));
    // HEAD is answered by the GET route when the document lists no HEAD of its own.
    const method = exchange.method.toLowerCase();
    const operation = route?.operations[method] ?? (method === 'head' ? route?.operations.get : undefined);
    if (!route || !operation) return this.checkUnrouted(exchange, label);

    const where = `${method} ${route.template}`;
    const response = operation.responses[String(exchange.status)] ?? operation.responses.default;
    if (!response) {
      return `${label}: ${where} (${operation.operationId}) does not document status ${exchange.status}; it lists ${Object.keys(operation.responses).join(', ')}`;
    }
    if (exchange.body.length === 0) return undefined;
    const mediaType = exchange.contentType?.split(';')[0].trim().toLowerCase();
    const documented = Object.keys(response.content ?? {});
    const match = documented.find((candidate) => mediaTypeMatches(candidate, mediaType));
    if (!match) {
      return `${label}: answered ${mediaType ?? 'a body without Content-Type'}, but ${where} documents ${documented.join(', ') || 'no body'} for ${exchange.status}`;
    }
    if (!isJson(mediaType)) return undefined;
    const pointer = [
      'paths',
      route.template,
      method === 'head' && !route.operations.head ? 'get' : method,
      'responses',
      response === operation.responses.default ? 'default' : String(exchange.status),
      'content',
      match,
      'schema',
    ];
    return this.validate(label, pointer, exchange);
  }

  /**
   * Why `value` does not match the schema at `pointer` (a path into the document, such as
   * ['paths', '/v1/flags', 'post', 'requestBody', 'content', 'application/json', 'schema']); empty when it does.
   * The document's own examples are held to their schemas with it.
   */
  mismatches(pointer: string[], value: unknown): string[] {
    const validate = this.validator(pointer);
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '(value)'} ${error.message}`);
  }

  private checkUnrouted(exchange: Exchange, label: string): string | undefined {
    if (![404, 400, 413, 415].includes(exchange.status)) {
      return `${label}: no operation in the document matches ${exchange.method} ${exchange.url.split('?')[0]}`;
    }
    if (exchange.body.length === 0 && exchange.method === 'HEAD') return undefined;
    const body = parseJson(exchange);
    if (body instanceof Error) return `${label}: ${body.message}`;
    const shapes = this.errorSchemas.map((name) => this.validator(['components', 'schemas', name]));
    if (shapes.some((validate) => validate(body))) return undefined;
    return `${label}: an unknown route's error body matches none of ${this.errorSchemas.join(', ')}: ${exchange.body.toString('utf8').slice(0, 200)}`;
  }

  private validate(label: string, pointer: string[], exchange: Exchange): string | undefined {
    if (exchange.truncated) return `${label}: a JSON body over ${MAX_RECORDED_BYTES} bytes`;
    const body = parseJson(exchange);
    if (body instanceof Error) return `${label}: ${body.message}`;
    const validate = this.validator(pointer);
    if (validate(body)) return undefined;
    const errors = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '(body)'} ${error.message}`);
    return `${label}: the body does not match ${pointer.slice(1, 3).join(' ')} ${pointer[4]}: ${errors.join('; ')} — body ${exchange.body.toString('utf8').slice(0, 300)}`;
  }

  private validator(pointer: string[]): ValidateFunction {
    const ref = `openapi#/${pointer.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    return validate;
  }
}

/**
 * OpenAPI 3.0.3's `nullable: true` adds null to the `type` of its own schema object, and does nothing without one
 * (it never widens a `$ref`, an `allOf` or a `oneOf`); JSON Schema has no such keyword, so a nullable schema's `type`
 * becomes `[type, "null"]`. Read this strictly, as a strict validator does, the check fails on a null the document
 * only seems to allow.
 */
function withNullAsJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNullAsJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const converted = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withNullAsJsonSchema(value)]));
  if (!('nullable' in converted)) return converted;
  const { nullable, ...schema } = converted;
  if (nullable !== true || typeof schema.type !== 'string') return schema;
  return { ...schema, type: [schema.type, 'null'] };
}

/** `/v1/flags/{flagId}` → a pattern; literal segments match case-insensitively, as the router does. */
function patternOf(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

function mediaTypeMatches(documented: string, actual: string | undefined): boolean {
  if (actual === undefined) return documented === '*/*';
  const [type, subtype] = documented.toLowerCase().split('/');
  const [actualType, actualSubtype] = actual.split('/');
  return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
}

function isJson(mediaType: string | undefined): boolean {
  return mediaType === 'application/json' || (mediaType?.endsWith('+json') ?? false);
}

function parseJson(exchange: Exchange): unknown {
  if (!isJson(exchange.contentType?.split(';')[0].trim().toLowerCase())) {
    return new Error(`answered ${exchange.contentType ?? 'no Content-Type'} where a JSON body is documented`);
  }
  try {
    return JSON.parse(exchange.body.toString('utf8'));
  } catch {
    return new Error('the body is not valid JSON');
  }
}
