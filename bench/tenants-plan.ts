/**
 * The thousand companies of `npm run bench -- tenants` (issue 23, point 5):
 * who they are and how large, deterministically. Sizes are skewed as in the
 * field: one company with 100,000 customers, ten with 10,000, and the rest
 * between 100 and 2,000, most of them small (100 · 20^(u²) for u uniform in
 * [0, 1), rounded to tens: median ≈ 240, mean ≈ 400). Every company has all
 * four kinds in the sample files' proportions (ROWS_PER_CUSTOMER: 4.9 records
 * a customer), about 3 million records at full scale. `scale` multiplies every
 * size (at least 10 customers), `companies` cuts the list (the large ones come
 * first, so any cut keeps the one with 100,000 × scale).
 */
import { KINDS, type Kind } from '../src/domain/kinds.js';
import { mulberry32 } from './clientes-fixture.js';
import { rowsOf } from './dataset.js';

export interface TenantPlan {
  slug: string;
  customers: number;
  /** Records of each kind. */
  rows: Record<Kind, number>;
  /** 1 = the most requested under the Zipf distribution. Ranks are shuffled against sizes. */
  zipfRank: number;
}

export const FULL_COMPANIES = 1000;

export function planTenants(companies: number, scale: number): TenantPlan[] {
  const random = mulberry32(20261127);
  const sized = (n: number) => Math.max(10, Math.round(n * scale));
  const plans: TenantPlan[] = [];
  for (let i = 0; i < companies; i++) {
    const customers =
      i === 0 ? sized(100_000) : i <= 10 ? sized(10_000) : sized(Math.round((100 * 20 ** (random() ** 2)) / 10) * 10);
    const rows = Object.fromEntries(KINDS.map((k) => [k, Math.max(1, rowsOf(k, customers))])) as Record<Kind, number>;
    plans.push({ slug: `t${String(i + 1).padStart(4, '0')}`, customers, rows, zipfRank: 0 });
  }
  // Ranks: a seeded shuffle, so the most requested company is not always the largest.
  const ranks = plans.map((_, i) => i + 1);
  for (let i = ranks.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ranks[i], ranks[j]] = [ranks[j]!, ranks[i]!];
  }
  plans.forEach((p, i) => (p.zipfRank = ranks[i]!));
  return plans;
}

export function totalRecords(plans: readonly TenantPlan[]): number {
  return plans.reduce((n, p) => n + KINDS.reduce((m, k) => m + p.rows[k], 0), 0);
}

/**
 * Draws companies with probability ∝ 1 / rank^s (Zipf; s = 1 by default):
 * with 1,000 companies the first takes ~13% of requests, the first ten ~39%.
 */
export function zipfSampler<T extends TenantPlan>(plans: readonly T[], random: () => number, s = 1): () => T {
  const byRank = [...plans].sort((a, b) => a.zipfRank - b.zipfRank);
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= byRank.length; r++) cumulative.push((sum += 1 / r ** s));
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return byRank[lo]!;
  };
}
