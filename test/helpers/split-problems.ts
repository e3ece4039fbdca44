/** The first broken record over a sequence of splits (record or byte splitter), counted from the first split's first row. */
export function firstQuoteProblem(splits: readonly { rows: readonly unknown[]; badQuoteRow: number; badQuote: string | null }[]) {
  let offset = 0;
  for (const s of splits) {
    if (s.badQuoteRow !== -1) return { badQuoteRow: offset + s.badQuoteRow, badQuote: s.badQuote };
    offset += s.rows.length;
  }
  return { badQuoteRow: -1, badQuote: null };
}
