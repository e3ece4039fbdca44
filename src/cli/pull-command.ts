/**
 * `mirador pull <kind>`: downloads a kind through the TypeScript client
 * (paging, retries) into NDJSON, CSV or JSON. With `--state FILE` it keeps a
 * sync point, so a nightly run fetches only what changed since the last one
 * and merges it into the file it maintains.
 */
import { createWriteStream } from 'node:fs';
import { access, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { isTombstone, ITEM_FIELDS, Mirador, MiradorError } from '../../packages/client/src/index.js';
import { KINDS, type Kind } from '../domain/kinds.js';
import { parseTimestamp } from '../http/api/list-query.js';
import { CliError, type CliContext } from './cli-context.js';
import { requireKind } from './import-commands.js';
import { writeCsv, writeJson, writeNdjson, type CsvDialect, type Destination, type Spool } from './pull-output.js';
import { checkStateMatches, nextUpdatedSince, readState, writeState, type PullFormat, type PullState } from './pull-state.js';

interface PullOptions {
  baseUrl?: string;
  key?: string;
  sandbox?: boolean;
  since?: string;
  state?: string;
  format?: PullFormat;
  csvDialect?: CsvDialect;
  output?: string;
  pageSize: string;
  json?: boolean;
  where: string[];
  fields?: string;
}

export function registerPullCommand(program: Command, ctx: CliContext) {
  program
    .command('pull')
    .description('download a kind from a Mirador server into NDJSON, CSV or JSON; with --state, only what changed since the last run')
    .argument('<kind>', KINDS.join(' | '))
    .option('--base-url <url>', 'where Mirador runs (default: PUBLIC_BASE_URL, else http://localhost:PORT)')
    .addOption(new Option('--key <key>', 'API key').env('MIRADOR_API_KEY'))
    .option('--sandbox', 'read the sandbox (fictitious data, no key)')
    .option('--since <timestamp>', 'only records changed at or after this ISO 8601 date or time')
    .option('--state <file>', 'sync point: the next run fetches only what changed, and merges it into the output')
    .addOption(new Option('--format <format>', 'output format (default: ndjson, or the state file’s)').choices(['ndjson', 'csv', 'json']))
    .addOption(
      new Option('--csv-dialect <dialect>', 'with --format csv: rfc4180 (comma; the default, or the state file’s) or excel-es (UTF-8 BOM, ";", decimal comma)').choices(['rfc4180', 'excel-es']),
    )
    .option('-o, --output <file>', 'write here (default: stdout; with --state: the state file’s)')
    .option('--page-size <n>', 'records per request, 1 to 1000', '1000')
    .option(
      '--where <field=value>',
      'only records whose field equals the value (repeat a field for any of several values; also q=, fecha_desde=, precio_min=…)',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--fields <list>', 'only these keys of each record, comma-separated (id_erp and actualizado_at always; data for the whole row)')
    .option('--json', 'print a summary as JSON on stdout (needs -o)')
    .action(async (kindArg: string, opts: PullOptions, command: Command) => {
      // A key from MIRADOR_API_KEY does not conflict with --sandbox; one typed on the command line does.
      const keyFromCli = command.getOptionValueSource('key') === 'cli';
      await pull(ctx, requireKind(kindArg), opts, keyFromCli);
    });
}

async function pull(ctx: CliContext, kind: Kind, opts: PullOptions, keyFromCli: boolean) {
  if (opts.since !== undefined && opts.state !== undefined) throw new CliError('Give --since or --state, not both: the state file knows where to resume.');
  const since = opts.since === undefined ? undefined : parseTimestamp(opts.since);
  if (since === null) throw new CliError(`--since must be an ISO 8601 date or time, such as 2026-11-21 or 2026-11-21T10:15:30Z; got "${opts.since}".`);
  const pageSize = Number(opts.pageSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new CliError(`--page-size must be an integer from 1 to 1000; got "${opts.pageSize}".`);
  const sandbox = opts.sandbox === true;
  if (sandbox && keyFromCli) throw new CliError('Give --key or --sandbox, not both.');
  const apiKey = sandbox ? undefined : opts.key?.trim();
  if (!sandbox && !apiKey) throw new CliError('An API key is needed: --key KEY or MIRADOR_API_KEY (or --sandbox to read the sandbox).');
  const baseUrl = (opts.baseUrl ?? ctx.config.publicBaseUrl).replace(/\/+$/, '');

  const stateFile = opts.state === undefined ? null : resolve(opts.state);
  const state = stateFile === null ? null : readState(stateFile);
  const format: PullFormat = opts.format ?? state?.format ?? 'ndjson';
  if (opts.csvDialect !== undefined && format !== 'csv') throw new CliError(`--csv-dialect is for --format csv, not ${format}.`);
  const csvDialect: CsvDialect | undefined = format === 'csv' ? (opts.csvDialect ?? state?.csv_dialect ?? 'rfc4180') : undefined;
  const output = opts.output !== undefined ? resolve(opts.output) : (state?.output ?? null);
  if (opts.json && output === null) throw new CliError('--json prints a summary on stdout, so the records need -o FILE.');
  if (stateFile !== null && format !== 'ndjson' && output === null) {
    throw new CliError(`--state with --format ${format} needs -o FILE: the file it keeps up to date.`);
  }
  if (stateFile !== null && state !== null) {
    checkStateMatches(stateFile, state, { kind, base_url: baseUrl, sandbox, format, csv_dialect: csvDialect, output });
    if (output !== null && !(await exists(output))) {
      throw new CliError(`${output} is missing, but "${stateFile}" says it holds the records up to ${state.max_actualizado_at}. Delete the state file to pull everything again.`);
    }
  }
  const subset = subsetParams(opts.where, opts.fields);
  if (stateFile !== null && state !== null && (state.where ?? '') !== subset.key) {
    throw new CliError(`The state file "${stateFile}" belongs to another pull (${state.where ? `--where/--fields ${state.where}` : 'the whole kind'}, not ${subset.key || 'the whole kind'}). Use another --state file.`);
  }
  const incremental = state !== null;
  const updatedSince = incremental ? nextUpdatedSince(state) : since === undefined ? undefined : new Date(since).toISOString();

  let client: Mirador;
  try {
    client = new Mirador({
      baseUrl,
      ...(sandbox ? { sandbox: true } : { apiKey }),
      // Retries can take half a minute (service.md §7): say so rather than sit silent.
      onRetry: ({ attempt, waitMs, error }) =>
        ctx.err(`pull ${kind}: ${error.status ? `HTTP ${error.status} ` : ''}${error.code}; retrying in ${Math.round(waitMs / 1000)} s (attempt ${attempt + 1} of 5)`),
    });
  } catch (err) {
    throw new CliError((err as Error).message.replace(/^Mirador: /, ''));
  }
  const spool: Spool = {
    file: `${output ?? join(tmpdir(), 'mirador-pull')}.${process.pid}.spool.ndjson`,
    count: 0,
    ids: new Set(),
    deleted: 0,
    dataColumns: [],
  };
  try {
    // With a sync point, deletions matter: tombstones say which records to drop from the file kept.
    // Filtered with a sync point, a record that stops matching comes as a tombstone too, so the file converges on the subset.
    // A first filtered run has nothing to delete: it skips the tombstones of every record outside the subset.
    const includeDeleted = stateFile !== null && (incremental || subset.key === '');
    const max = await download(client, kind, { ...subset.params, updatedSince, pageSize, includeDeleted }, spool);
    const to: Destination = output === null ? { stdout: process.stdout } : { file: output };
    let records: number;
    if (format === 'ndjson') records = (incremental ? state.records : 0) + (await writeNdjson(spool, to, incremental));
    else if (format === 'csv') records = await writeCsv(spool, to, csvFields(kind, subset.fields), incremental ? output : null, csvDialect);
    else records = await writeJson(spool, to, incremental ? output : null);

    const maxSeen = max ?? state?.max_actualizado_at ?? null;
    if (stateFile !== null) {
      await writeState(stateFile, {
        version: 1, kind, base_url: baseUrl, sandbox, format, ...(csvDialect ? { csv_dialect: csvDialect } : {}), output,
        max_actualizado_at: maxSeen, records, last_run_at: new Date().toISOString(),
        ...(subset.key ? { where: subset.key } : {}),
      });
    }
    const summary = {
      kind, format, output, fetched: spool.count, deleted: spool.deleted, records, updated_since: updatedSince ?? null,
      max_actualizado_at: maxSeen, state: stateFile,
    };
    if (opts.json) ctx.out(JSON.stringify(summary, null, 2));
    else ctx.err(describe(summary, incremental));
  } finally {
    await rm(spool.file, { force: true });
  }
}

/** Pages through the kind into the spool; returns the newest `actualizado_at` seen. */
async function download(
  client: Mirador,
  kind: Kind,
  params: { updatedSince?: string; pageSize: number; includeDeleted?: boolean } & Record<string, unknown>,
  spool: Spool,
): Promise<string | null> {
  const out = createWriteStream(spool.file);
  const columns = new Set<string>();
  const progress = new PullProgress(kind);
  let max: string | null = null;
  try {
    for await (const page of client.forKind(kind).pages(params)) {
      progress.total(page.total);
      for (const item of page.items) {
        if (!out.write(`${JSON.stringify(item)}\n`)) await once(out, 'drain');
        spool.count++;
        spool.ids.add(item.id_erp);
        if (isTombstone(item)) spool.deleted++;
        else if (item.data) for (const c of Object.keys(item.data)) if (!columns.has(c)) columns.add(c);
        // Same format throughout (UTC, milliseconds): text order is time order.
        if (max === null || item.actualizado_at > max) max = item.actualizado_at;
      }
      progress.rows(spool.count);
    }
  } catch (err) {
    out.destroy();
    if (err instanceof MiradorError) {
      const where = [err.code, err.status === null ? null : `HTTP ${err.status}`, err.requestId && `request ${err.requestId}`].filter(Boolean).join(', ');
      throw new CliError(`${err.message} (${where})`);
    }
    throw err;
  } finally {
    progress.stop();
  }
  await new Promise<void>((done, fail) => out.end((e?: Error | null) => (e ? fail(e) : done())));
  spool.dataColumns = [...columns];
  return max;
}

/**
 * `--where field=value` (repeated) and `--fields a,b` as the client's
 * parameters, and as a canonical text that a state file remembers: a sync
 * point is only valid for the subset it was made for.
 */
function subsetParams(where: readonly string[], fields: string | undefined): { params: Record<string, unknown>; fields: string[] | null; key: string } {
  const params: Record<string, string[]> = {};
  for (const w of where) {
    const eq = w.indexOf('=');
    if (eq <= 0) throw new CliError(`--where must be field=value, such as --where estado=abierto; got "${w}".`);
    (params[w.slice(0, eq)] ??= []).push(w.slice(eq + 1));
  }
  const list = fields === undefined ? null : fields.split(',').map((f) => f.trim());
  const single = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
  const key = [
    ...Object.keys(params).sort().flatMap((k) => params[k]!.slice().sort().map((v) => `${k}=${v}`)),
    ...(list ? [`fields=${list.join(',')}`] : []),
  ].join(' ');
  return { params: { ...single, ...(list ? { fields: list } : {}) }, fields: list, key };
}

/** The highlighted fields a CSV has columns for: those kept by --fields, in item order. */
function csvFields(kind: Kind, fields: string[] | null): readonly string[] {
  return fields === null ? ITEM_FIELDS[kind] : ITEM_FIELDS[kind].filter((f) => f === 'id_erp' || fields.includes(f));
}

function describe(s: { kind: string; format: string; output: string | null; fetched: number; records: number; max_actualizado_at: string | null; state: string | null }, incremental: boolean): string {
  const what = `${s.fetched} ${incremental ? 'changed ' : ''}record${s.fetched === 1 ? '' : 's'} of ${s.kind}`;
  const into = s.output === null ? 'stdout' : `${s.output} (${s.format}, ${s.records} record${s.records === 1 ? '' : 's'} in the file)`;
  const lines = [`Pulled ${what} into ${into}.`];
  if (s.state) lines.push(`Sync point saved in ${s.state}: the next run asks for changes after ${s.max_actualizado_at ?? 'the beginning'}.`);
  return lines.join('\n');
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/** Rows and ETA on stderr: a bar on a terminal, a plain line a second otherwise. */
class PullProgress {
  private readonly bar: SingleBar | null;
  private readonly started = Date.now();
  private sawPage = false;
  private expected = 0;
  private done = 0;
  private lastLine = Date.now();

  constructor(private readonly kind: string) {
    this.bar = process.stderr.isTTY
      ? new SingleBar({ stream: process.stderr, format: `pull ${kind} [{bar}] {percentage}% | {value}/{total} rows | ETA {eta_formatted}`, hideCursor: true })
      : null;
  }

  total(n: number) {
    if (this.bar && !this.sawPage) this.bar.start(Math.max(n, 1), 0);
    this.sawPage = true;
    this.expected = n;
  }

  rows(n: number) {
    this.done = n;
    if (this.bar) return this.bar.update(n);
    if (Date.now() - this.lastLine >= 1000) this.line();
  }

  /** Ends the display; without a single page there is nothing to report (the error says why). */
  stop() {
    if (this.bar) return this.bar.stop();
    if (this.sawPage) this.line();
  }

  private line() {
    this.lastLine = Date.now();
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001);
    const rate = this.done / seconds;
    const eta = rate > 0 ? Math.ceil((this.expected - this.done) / rate) : 0;
    const pct = this.expected > 0 ? Math.floor((100 * this.done) / this.expected) : 100;
    process.stderr.write(`pull ${this.kind}: ${this.done}/${this.expected} rows ${pct}% ETA ${eta}s\n`);
  }
}
