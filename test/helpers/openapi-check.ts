/**
 * Checks a response against the OpenAPI document of the server that sent it
 * (fetched once per server from /openapi.json): the operation for its method
 * and path must document its status, every required header must be there,
 * every documented header present must match its schema, and the body must
 * match the response's schema (Ajv, JSON Schema 2020-12).
 *
 * Answers no operation describes: a preflight and a 405 (another method on an
 * API path) are checked against what the document's description says; an
 * unknown path must be a catalog error, held to the component response that
 * documents its code.
 */
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ERROR_CATALOG } from '../../src/http/errors.js';

export interface CheckedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

type Json = Record<string, any>;

interface Compiled {
  doc: Json;
  paths: { template: string; regex: RegExp; item: Json }[];
  validator(schema: Json): ValidateFunction;
}

const DOC_ID = 'https://mirador.invalid/openapi.json';
const documents = new Map<string, Promise<Compiled>>();

/** The document `origin` serves, compiled (cached per origin: every test server runs the same code). */
export function documentOf(origin: string): Promise<Compiled> {
  let doc = documents.get(origin);
  if (!doc) {
    doc = fetchJson(`${origin}/openapi.json`).then(compile);
    doc.catch(() => documents.delete(origin));
    documents.set(origin, doc);
  }
  return doc;
}

function fetchJson(url: string): Promise<Json> {
  return new Promise((resolve, reject) => {
    httpRequest(url, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('error', reject);
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
        resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
      });
    })
      .on('error', reject)
      .end();
  });
}

/** `#/components/schemas/X` → `<DOC_ID>#/$defs/X`: the component schemas become one Ajv schema. */
const rewrite = <T>(value: T): T =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${DOC_ID}#/$defs/`));

function compile(doc: Json): Compiled {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: DOC_ID, $defs: rewrite(doc.components?.schemas ?? {}) });
  const cache = new Map<string, ValidateFunction>();
  const paths = Object.entries(doc.paths as Record<string, Json>)
    .map(([template, item]) => ({
      template,
      item,
      regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }))
    // Concrete paths match before templated ones (OpenAPI 3.1, Paths Object).
    .sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
  return {
    doc,
    paths,
    validator(schema) {
      const key = JSON.stringify(schema);
      let v = cache.get(key);
      if (!v) cache.set(key, (v = ajv.compile(rewrite(schema))));
      return v;
    },
  };
}

/** Follows a local `$ref` (`#/components/...`) inside the document. */
export function deref(doc: Json, value: Json): Json {
  let out = value;
  for (let i = 0; i < 10 && typeof out?.$ref === 'string'; i++) {
    const path = (out.$ref as string).replace(/^#\//, '').split('/');
    out = path.reduce<Json>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  if (out === undefined) throw new Error(`unresolved $ref ${value.$ref}`);
  return out;
}

function decoded(res: CheckedResponse): Buffer {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(res.body);
  if (encoding === 'br') return brotliDecompressSync(res.body);
  return res.body;
}

function errorCodeOf(res: CheckedResponse): string | null {
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json') || res.body.length === 0) return null;
  try {
    const body = JSON.parse(decoded(res).toString('utf8'));
    return body && body.ok === false && typeof body.error === 'string' ? body.error : null;
  } catch {
    return null;
  }
}

/** A header's text as its schema's type, for validation. */
function headerValue(text: string, schema: Json): unknown {
  return (schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/**
 * Throws when `res`, the answer to `method url`, is not what the document
 * says. Responses outside the API (the panel, ops endpoints, the docs page)
 * are left alone, unless they are errors of the catalog.
 */
export async function checkResponse(url: string, method: string, res: CheckedResponse): Promise<void> {
  const { origin, pathname } = new URL(url);
  const errorCode = errorCodeOf(res);
  const api = pathname === '/v1' || pathname.startsWith('/v1/');
  const compiled = await documentOf(origin);
  const { doc } = compiled;
  const matched = compiled.paths.find((p) => p.regex.test(pathname));
  // Outside the API only the catalog's own errors are held to it. The panel (and its upload-token API)
  // answers in its own ways, without CORS: its own tests hold it.
  if (!matched && !api && (errorCode === null || !(errorCode in ERROR_CATALOG) || /^\/panel(?:\/|$)/.test(pathname))) return;

  const what = `${method} ${pathname} → ${res.status}`;
  const fail = (why: string): never => {
    throw new Error(`OpenAPI: ${what} does not match the document: ${why}`);
  };
  let response: Json;
  const operation = matched?.item[method.toLowerCase()];
  if (operation) {
    const s = String(res.status);
    response = operation.responses[s] ?? operation.responses[`${s[0]}XX`] ?? operation.responses.default;
    if (!response) fail(`${matched!.template} documents no ${s} for ${method}`);
  } else if (matched && method === 'OPTIONS') {
    // Preflights are described once, in the document's description (issue 21, point 9).
    return checkPreflight(res, fail);
  } else {
    // A HEAD to an unknown path: no body says which error it is; its GET is checked instead.
    if (!matched && method === 'HEAD') return;
    // Another method on an API path (405, described in the description), or an unknown path: a catalog error.
    const code = matched ? 'method_not_allowed' : errorCode;
    if (code === null || !(code in ERROR_CATALOG)) return fail(`no operation, and not an error from the catalog (error: ${errorCode})`);
    if (ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].status !== res.status) fail(`${code} is a ${ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].status}`);
    if (code === 'method_not_allowed') return checkMethodNotAllowed(res, errorCode, fail);
    response = errorResponseFor(doc, code) ?? fail(`no response in #/components/responses documents ${code}`);
  }
  response = deref(doc, response);

  for (const [name, raw] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const header = deref(doc, raw);
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) fail(`required header ${name} is missing`);
      continue;
    }
    const validate = compiled.validator(header.schema ?? {});
    if (!validate(headerValue(String(value), header.schema ?? {}))) fail(`header ${name}: ${JSON.stringify(value)} ${validateText(validate)}`);
  }

  const media = response.content?.['application/json'];
  if (!media || method === 'HEAD') {
    if (res.body.length > 0) fail(`a body was sent where the document has none (${res.body.length} bytes)`);
    return;
  }
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) fail(`content-type ${res.headers['content-type']}`);
  let body: unknown;
  try {
    body = JSON.parse(decoded(res).toString('utf8'));
  } catch (err) {
    return fail(`the body is not JSON: ${(err as Error).message}`);
  }
  const validate = compiled.validator(media.schema);
  if (!validate(body)) fail(validateText(validate));
}

/** The component response whose examples include `code` (`not_found`, `bad_request_or_invalid_parameter`…). */
function errorResponseFor(doc: Json, code: string): Json | undefined {
  return Object.values<Json>(doc.components?.responses ?? {}).find((r) => r.content?.['application/json']?.examples?.[code]);
}

/** A preflight, as the document's description states it. */
function checkPreflight(res: CheckedResponse, fail: (why: string) => never): void {
  if (res.status !== 204) fail('a preflight answers 204');
  const h = (name: string) => String(res.headers[name] ?? '');
  if (h('access-control-allow-origin') !== '*') fail('a preflight allows any origin');
  if (h('access-control-allow-methods') !== 'GET, HEAD, OPTIONS') fail(`Access-Control-Allow-Methods ${h('access-control-allow-methods')}`);
  for (const name of ['Authorization', 'X-API-Key']) {
    if (!h('access-control-allow-headers').split(/,\s*/).includes(name)) fail(`Access-Control-Allow-Headers does not name ${name}`);
  }
  if (res.body.length > 0) fail('a preflight has no body');
}

/** A 405, as the document's description states it: `Allow`, CORS, the catalog's body. */
function checkMethodNotAllowed(res: CheckedResponse, errorCode: string | null, fail: (why: string) => never): void {
  if (res.headers.allow !== 'GET, HEAD, OPTIONS') fail(`Allow: ${res.headers.allow}`);
  if (res.headers['access-control-allow-origin'] !== '*') fail('a 405 is readable by any origin');
  if (errorCode !== 'method_not_allowed') fail(`error ${errorCode}`);
  const body = JSON.parse(decoded(res).toString('utf8'));
  if (Object.keys(body).join() !== 'ok,error,message,request_id' || body.request_id !== res.headers['x-request-id']) fail(`body ${JSON.stringify(body)}`);
}

function validateText(validate: ValidateFunction): string {
  return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`).join('; ');
}
