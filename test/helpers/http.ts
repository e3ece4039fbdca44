/**
 * A small HTTP client on node:http, so tests see exactly what went over the
 * wire: raw headers, compressed bytes, no automatic decompression. Every
 * response is also checked against the server's OpenAPI document.
 */
import { request as httpRequest } from 'node:http';
import { checkResponse } from './openapi-check.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text(): string;
  json(): any;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** Sends a request; fails when the response contradicts the OpenAPI document (see openapi-check.ts). */
export async function request(url: string, options: RequestOptions = {}): Promise<RawResponse> {
  const res = await send(url, options);
  await checkResponse(url, options.method ?? 'GET', res);
  return res;
}

function send(url: string, options: RequestOptions): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    // Node sends no framing for a DELETE body unless told its length.
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = httpRequest(url, { method: options.method ?? 'GET', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(parts);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          text: () => body.toString('utf8'),
          json: () => JSON.parse(body.toString('utf8')),
        });
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
