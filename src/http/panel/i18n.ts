/**
 * The panel's words, in Spanish (the default: the panel's users are Spanish
 * companies) and English. One table (i18n-messages.ts), each entry `[es, en]`, so a missing
 * translation is a type error rather than a blank on the page. `{name}` is
 * replaced by a parameter; the result is plain text, escaped by the templates.
 */
import type { Kind } from '../../domain/kinds.js';
import { MESSAGES } from './i18n-messages.js';

export const LANGS = ['es', 'en'] as const;
export type Lang = (typeof LANGS)[number];

export function isLang(value: unknown): value is Lang {
  return value === 'es' || value === 'en';
}

export type MessageKey = keyof typeof MESSAGES;
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

export function translator(lang: Lang): Translate {
  const at = lang === 'es' ? 0 : 1;
  return (key, params) => {
    const text: string = MESSAGES[key][at];
    return params ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m)) : text;
  };
}

export function kindLabel(t: Translate, kind: Kind): string {
  return t(`kind_${kind}`);
}

/** The localised reason of an import error code, or null for a code this table does not know. */
export function importErrorLabel(t: Translate, code: string): string | null {
  const key = `importError_${code}`;
  return key in MESSAGES ? t(key as MessageKey) : null;
}

/** Only the statuses the store knows; anything else is shown as is. */
export function statusLabel(t: Translate, status: string): string {
  const key = `status_${status}`;
  return key in MESSAGES ? t(key as MessageKey) : status;
}

/** The label of an audit action (`key.revoke`) or group (`key`); the name itself when the table lacks it. */
export function auditLabel(t: Translate, name: string, group = false): string {
  const key = `${group ? 'group' : 'action'}_${name}`;
  return key in MESSAGES ? t(key as MessageKey) : name;
}
