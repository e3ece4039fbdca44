/**
 * Writes values the way a Spanish ERP export does: decimal commas, DD/MM/YYYY
 * dates, identifiers with valid check digits. Everything is computed with UTC
 * arithmetic and `toFixed`, neither of which depends on the locale or the time
 * zone of the machine.
 */
import type { SandboxRandom } from './sandbox-random.js';

export const MS_PER_DAY = 86_400_000;

export function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Milliseconds since the epoch of a UTC calendar date and time. */
export function utc(year: number, month: number, day: number, h = 0, min = 0, s = 0, ms = 0): number {
  return Date.UTC(year, month - 1, day, h, min, s, ms);
}

/** `DD/MM/YYYY` of the UTC day containing `ms`. */
export function fmtDate(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate(), 2)}/${pad(d.getUTCMonth() + 1, 2)}/${d.getUTCFullYear()}`;
}

/** `DD/MM/YYYY HH:MM:SS`, as ERPs write modification stamps. */
export function fmtDateTime(ms: number): string {
  const d = new Date(ms);
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return `${fmtDate(ms)} ${time}`;
}

/** A random instant between `from` and `to` (ms), on a whole second. */
export function between(r: SandboxRandom, from: number, to: number): number {
  const seconds = Math.floor((to - from) / 1000);
  return from + r.int(0, Math.max(0, seconds)) * 1000;
}

/** A random instant on a working hour (07:00–19:59) of a day between `from` and `to`. */
export function workingTime(r: SandboxRandom, from: number, to: number): number {
  const day = Math.floor(between(r, from, to) / MS_PER_DAY) * MS_PER_DAY;
  return day + r.int(7 * 3600, 19 * 3600 + 3599) * 1000;
}

/** `1234,5` style: a fixed number of decimals after a comma, no thousands separator. */
export function decimal(value: number, places: number): string {
  return value.toFixed(places).replace('.', ',');
}

/** Integer cents as `1234,56`. */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  return `${sign}${Math.floor(abs / 100)},${pad(abs % 100, 2)}`;
}

const CIF_CONTROL_LETTERS = 'JABCDEFGHI';

/**
 * A Spanish CIF with a valid control character: the organisation letter, two
 * digits of province, five of sequence, and a digit (companies) or a letter
 * (public bodies).
 */
export function cif(r: SandboxRandom, letter: string, province: string): string {
  const body = province + r.digits(5);
  let sum = 0;
  for (let i = 0; i < 7; i++) {
    const d = Number(body[i]);
    if (i % 2 === 1) sum += d;
    else sum += Math.floor((d * 2) / 10) + ((d * 2) % 10);
  }
  const control = (10 - (sum % 10)) % 10;
  const asLetter = 'KPQSNW'.includes(letter);
  return letter + body + (asLetter ? CIF_CONTROL_LETTERS[control] : String(control));
}

const NIF_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** A Spanish NIF (DNI number and its check letter). */
export function nif(r: SandboxRandom): string {
  const n = r.int(10_000_000, 79_999_999);
  return pad(n, 8) + NIF_LETTERS[n % 23];
}

function cccDigit(digits: string): number {
  const weights = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6];
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += Number(digits[i]) * (weights[i] as number);
  const d = 11 - (sum % 11);
  return d === 11 ? 0 : d === 10 ? 1 : d;
}

/** A Spanish IBAN for `bank` with valid CCC and IBAN check digits, grouped by four. */
export function iban(r: SandboxRandom, bank: string): string {
  const branch = r.digits(4);
  const account = r.digits(10);
  const ccc = bank + branch + String(cccDigit('00' + bank + branch)) + String(cccDigit(account)) + account;
  // ISO 13616: move "ES00" to the end, letters to numbers (E=14, S=28), mod 97.
  let rest = 0;
  for (const ch of ccc + '142800') rest = (rest * 10 + Number(ch)) % 97;
  const full = 'ES' + pad(98 - rest, 2) + ccc;
  return full.replace(/(.{4})(?!$)/g, '$1 ');
}

/** An EAN-13 with the Spanish prefix 84 and a valid check digit. */
export function ean13(r: SandboxRandom): string {
  const body = '84' + r.digits(10);
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}

/** A nine-digit landline number starting with the given area prefix. */
export function landline(r: SandboxRandom, prefix: string): string {
  return prefix + String(r.int(2, 8)) + r.digits(8 - prefix.length);
}

/** A nine-digit mobile number (6xx or 7[1-4]x). */
export function mobile(r: SandboxRandom): string {
  return r.chance(0.85) ? '6' + r.digits(8) : '7' + String(r.int(1, 4)) + r.digits(7);
}

/** `968 79 18 05`: how some users type numbers into the ERP. */
export function spacedPhone(phone: string): string {
  return `${phone.slice(0, 3)} ${phone.slice(3, 5)} ${phone.slice(5, 7)} ${phone.slice(7)}`;
}

const PLATE_LETTERS = 'BCDFGHJKLMNPRSTVWXYZ';

/** A Spanish number plate such as `4821 KLM`. */
export function plate(r: SandboxRandom): string {
  let letters = '';
  for (let i = 0; i < 3; i++) letters += r.pick(PLATE_LETTERS.split(''));
  return `${r.digits(4)} ${letters}`;
}

const COMPANY_FORMS = /\s+(S\.L\.U\.|S\.L\.L\.|S\.L\.|S\.A\.U\.|S\.A\.|S\.Coop\.|C\.B\.)$/;

/**
 * A lower-case ASCII token for e-mail and web addresses, without legal form or
 * particles: "Pinturas del Valle S.L." → "pinturasvalle".
 */
export function slug(name: string, max = 28): string {
  return name
    .trim()
    .replace(COMPANY_FORMS, '')
    .split(/\s+/)
    .filter((word) => !['de', 'del', 'la', 'las', 'los', 'y', 'e'].includes(word))
    .join('')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, max);
}
