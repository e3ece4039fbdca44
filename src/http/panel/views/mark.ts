/**
 * Mirador's mark: a viewpoint over hills under a sun, on the accent colour.
 * One source for the favicon (served as /panel/assets/mark.svg) and the
 * inline copy in the panel's header.
 */
import { SafeHtml } from '../html.js';

const SHAPES =
  '<rect width="32" height="32" rx="8" fill="#4338ca"/>' +
  '<path d="M5 21 L12 12 L17 18 L21 14 L27 21 Z" fill="#c7d2fe"/>' +
  '<circle cx="22.5" cy="9.5" r="3" fill="#fbbf24"/>' +
  '<path d="M5 24.5 H27" stroke="#ffffff" stroke-width="2" stroke-linecap="round"/>';

/** The file served as the favicon. */
export const MARK_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${SHAPES}</svg>\n`;

/** The mark beside the product's name: decoration, hidden from assistive technology. */
export function mark(): SafeHtml {
  return new SafeHtml(`<svg class="mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false">${SHAPES}</svg>`);
}
