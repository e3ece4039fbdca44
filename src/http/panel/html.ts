/**
 * The panel's only way to build HTML. Every value interpolated into `html`
 * is escaped by `escapeHtml` — CSV cells, column names, file names, labels,
 * emails, messages — unless it is itself the result of `html` (already
 * safe). There is deliberately no "raw" escape hatch: markup comes from
 * template literals in this code, text from anywhere else.
 *
 * @example
 * html`<td title="${cell}">${cell}</td>` // cell = '"><img onerror=x>' stays text
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for element content and for quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Markup produced by `html`: interpolated as is by other `html` templates. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

/** What a template may interpolate: text (escaped), numbers, safe markup, lists of those, or nothing. */
export type HtmlValue = string | number | SafeHtml | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}
