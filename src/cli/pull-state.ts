/**
 * The sync point of `mirador pull --state FILE`: what was pulled, from where,
 * into which file, and the newest `actualizado_at` seen, so the next run asks
 * only for what changed after it.
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { CliError } from './cli-context.js';
import type { CsvDialect } from './pull-output.js';

export type PullFormat = 'ndjson' | 'csv' | 'json';

export interface PullState {
  version: 1;
  kind: string;
  base_url: string;
  sandbox: boolean;
  format: PullFormat;
  /** csv only; absent in states written before dialects (rfc4180). */
  csv_dialect?: CsvDialect;
  /** The file kept up to date (absolute), or null for ndjson on stdout. */
  output: string | null;
  /** The newest `actualizado_at` pulled so far (ISO 8601, UTC, ms). */
  max_actualizado_at: string | null;
  /** Records in the output after the last run (csv and json); records appended in all (ndjson). */
  records: number;
  last_run_at: string;
  /** The subset pulled (`--where`, `--fields`), as text; absent for the whole kind. */
  where?: string;
}

/** The state in `file`, or null when there is none yet. */
export function readState(file: string): PullState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`Cannot read the state file "${file}": ${(err as Error).message}`);
  }
  let state: PullState;
  try {
    state = JSON.parse(text) as PullState;
  } catch {
    throw new CliError(`The state file "${file}" is not JSON. Delete it to pull everything again.`);
  }
  if (state?.version !== 1 || typeof state.kind !== 'string') {
    throw new CliError(`"${file}" is not a state file of mirador pull. Delete it to pull everything again.`);
  }
  return state;
}

/** What a run is about to do, checked against the state so that one file never mixes two sources. */
export function checkStateMatches(
  file: string,
  state: PullState,
  run: Omit<PullState, 'version' | 'max_actualizado_at' | 'records' | 'last_run_at' | 'csv_dialect'> & { csv_dialect: CsvDialect | undefined },
) {
  const differences: string[] = [];
  if (state.kind !== run.kind) differences.push(`kind ${state.kind}, not ${run.kind}`);
  if (state.base_url !== run.base_url || state.sandbox !== run.sandbox) {
    differences.push(`source ${state.base_url}${state.sandbox ? ' (sandbox)' : ''}, not ${run.base_url}${run.sandbox ? ' (sandbox)' : ''}`);
  }
  if (state.format !== run.format) differences.push(`format ${state.format}, not ${run.format}`);
  else if (run.format === 'csv' && (state.csv_dialect ?? 'rfc4180') !== run.csv_dialect) {
    differences.push(`csv dialect ${state.csv_dialect ?? 'rfc4180'}, not ${run.csv_dialect}`);
  }
  if (state.output !== run.output) differences.push(`output ${state.output ?? 'stdout'}, not ${run.output ?? 'stdout'}`);
  if (differences.length > 0) {
    throw new CliError(`The state file "${file}" belongs to another pull (${differences.join('; ')}). Use another --state file.`);
  }
}

/**
 * The `updated_since` of the next run: one millisecond after the newest
 * `actualizado_at` seen. Every record an import touches carries that import's
 * one timestamp, and imports of a kind run one after another, so nothing can
 * appear later at or before that instant; asking inclusively from it would
 * download the last import's records again on every run.
 */
export function nextUpdatedSince(state: PullState | null): string | undefined {
  if (!state?.max_actualizado_at) return undefined;
  return new Date(Date.parse(state.max_actualizado_at) + 1).toISOString();
}

/** Writes the state atomically: a crash leaves the old state or the new one. */
export async function writeState(file: string, state: PullState): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temp, file);
}
