/**
 * Third-party OpenAPI tools run as integrators run them (issue 21): Redocly
 * CLI, Spectral, Prism as a validating proxy. All come from devDependencies
 * and need no network: telemetry and update checks are off.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { HANG_GUARD_MS } from './timing.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const LINT_CONFIG = `${ROOT}test/api-lint/`;
const BIN = `${ROOT}node_modules/.bin/`;

const QUIET = {
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1',
};

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a devDependency's command; never through a shell. */
export function runTool(command: string, args: string[], env: Record<string, string> = {}): Promise<ToolResult> {
  return runCommand(`${BIN}${command}`, args, env);
}

/** Runs a program without blocking this process (whose server the program may call). */
export function runCommand(file: string, args: string[], env: Record<string, string> = {}): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: { ...process.env, ...QUIET, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A free TCP port on 127.0.0.1, for tools that take no port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Prism {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/**
 * `prism proxy <document> <upstream> --errors`: every request and response is
 * validated against the document, and a violation is answered by Prism itself
 * (a `422`/`500` with `application/problem+json`) instead of the upstream's.
 */
export async function startPrism(documentFile: string, upstream: string): Promise<Prism> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    `${BIN}prism`,
    ['proxy', documentFile, upstream, '--errors', '--cors=false', '--host', '127.0.0.1', '--port', String(port)],
    {
      // Prism's own server would refuse a 17 KB head itself (Node's 16 KiB default); raised so the
      // request reaches Mirador, whose 431 is what the matrix checks.
      env: { ...process.env, NODE_OPTIONS: '--max-http-header-size=65536', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${out}`)), HANG_GUARD_MS);
    const seen = (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => reject(new Error(`Prism exited (${code}):\n${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * An HTTP hop between Prism and Mirador that drops `Content-Type` from answers
 * that have no body: HEAD answers and 304s. Prism (5.x, prism-http
 * parseResponseBody) parses every non-204 answer whose Content-Type is JSON,
 * so it fails on a HEAD ("invalid json response body") although RFC 9110
 * (9.3.2) says a HEAD answer has no content. No documented header is touched.
 */
export async function bodilessContentTypeHop(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  // The hop must carry the 17 KB head that Mirador answers with 431.
  const server = createServer({ maxHeaderSize: 65536 }, (req, res) => {
    const forward = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const headers = { ...answer.headers };
        if (req.method === 'HEAD' || answer.statusCode === 304) delete headers['content-type'];
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
