/**
 * Collects benchmark results and prints them as Markdown tables (pasted into
 * the README as they are), and keeps them as JSON in bench/out/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}

export const fmt = {
  int: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '—'),
  ms: (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : '—'),
  ratio: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—'),
  mb: (bytes: number) => (bytes / 2 ** 20).toFixed(1),
};

export interface Section {
  title: string;
  /** Lines printed under the title, before the table (conditions of the run). */
  notes: string[];
  header: string[];
  rows: string[][];
}

export class Report {
  private readonly sections: Section[] = [];
  private readonly data: Record<string, unknown> = {};

  constructor(readonly outDir: string) {}

  section(title: string, header: string[], notes: string[] = []): Section {
    const s: Section = { title, notes, header, rows: [] };
    this.sections.push(s);
    return s;
  }

  /** Adds a row and prints it at once, so a long run shows progress. */
  row(section: Section, cells: string[]) {
    section.rows.push(cells);
    process.stdout.write(`  ${section.title}: ${cells.join(' | ')}\n`);
  }

  /** Raw numbers for the JSON file. */
  record(key: string, value: unknown) {
    this.data[key] = value;
  }

  print(): string {
    const out: string[] = [];
    for (const s of this.sections) {
      out.push(`### ${s.title}`, '');
      for (const n of s.notes) out.push(n);
      if (s.notes.length > 0) out.push('');
      out.push(`| ${s.header.join(' | ')} |`, `|${s.header.map(() => '---').join('|')}|`);
      for (const r of s.rows) out.push(`| ${r.join(' | ')} |`);
      out.push('');
    }
    const text = out.join('\n');
    process.stdout.write(`\n${text}\n`);
    return text;
  }

  save(name: string, extra: Record<string, unknown>) {
    mkdirSync(this.outDir, { recursive: true });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(this.outDir, `${name}-${stamp}.json`);
    writeFileSync(file, JSON.stringify({ ...extra, results: this.data, tables: this.sections }, null, 2));
    const md = join(this.outDir, `${name}-${stamp}.md`);
    writeFileSync(md, this.print());
    process.stdout.write(`results: ${file}\n`);
  }
}
