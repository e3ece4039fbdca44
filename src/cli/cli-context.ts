/** What every command receives, and how commands print and fail. */
import { userInfo } from 'node:os';
import type { Config } from '../config.js';
import { cliActor, type AuditActor } from '../domain/audit.js';
import type { Store, StoreOptions } from '../store/store.js';

export interface CliContext {
  config: Config;
  /** Opens the store and brings its schema up to date (unless `migrate: false`). */
  openStore(options?: StoreOptions & { migrate?: boolean }): Promise<Store>;
  out: (text: string) => void;
  err: (text: string) => void;
}

/** An expected failure: printed as one line on stderr, exit code 1. */
export class CliError extends Error {}

export interface JsonOption {
  json?: boolean;
}

/** Prints one JSON document with `--json`, else the human-readable text. */
export function emit(ctx: CliContext, opts: JsonOption, json: unknown, text: () => string) {
  ctx.out(opts.json ? JSON.stringify(json, null, 2) : text());
}

/** Runs `fn` with an open store, closing it afterwards whatever happens. */
export async function withStore<T>(ctx: CliContext, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await ctx.openStore();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export const SLUG = /^[a-z0-9-]{1,64}$/;

export async function requireCompany(store: Store, slug: string) {
  if (!SLUG.test(slug)) throw new CliError(`"${slug}" is not a valid company slug: use 1 to 64 of a-z, 0-9 and "-".`);
  const company = await store.companyBySlug(slug);
  if (!company) throw new CliError(`There is no company with slug "${slug}". See "mirador company list".`);
  return company;
}

export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Who runs this command, for the audit trail: `cli:<OS user>`. */
export function cliWho(): AuditActor {
  let name = '';
  try {
    name = userInfo().username;
  } catch {
    // A user id without a passwd entry (some containers): the trail says "cli:unknown".
  }
  return cliActor(name);
}
