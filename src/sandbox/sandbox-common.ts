/**
 * Pieces shared by the sandbox generators: the row type, addresses and people.
 */
import { slug } from './sandbox-format.js';
import type { SandboxRandom } from './sandbox-random.js';
import type { Town } from './sandbox-names.js';
import {
  FIRST_NAMES, FLOORS, INDUSTRIAL_ESTATES, STREET_NAMES, STREET_TYPES, SURNAMES, TOWNS,
} from './sandbox-names.js';

/** One generated row: cell text by column name; a column left out is an empty cell. */
export type SandboxRecord<C extends string> = Partial<Record<C, string>>;

/** What a generator returns: the rows, and what later kinds need to refer to them. */
export interface Generated<C extends string, R> {
  readonly records: SandboxRecord<C>[];
  readonly refs: R[];
}

export interface Place {
  readonly domicilio: string;
  readonly ciudad: string;
  readonly provincia: string;
  readonly cpostal: string;
  readonly town: Town;
}

/**
 * A street address in a real town, with an invented street and number; a
 * business may be on an industrial estate.
 */
export function place(r: SandboxRandom, town: Town = r.pick(TOWNS), business = true): Place {
  let domicilio: string;
  if (r.chance(0.1) && business) {
    domicilio = `Pol. Ind. ${r.pick(INDUSTRIAL_ESTATES)}, Nave ${r.int(1, 48)}`;
  } else {
    const number = r.chance(0.06) ? 's/n' : String(r.int(1, 240));
    const floor = r.pick(FLOORS);
    domicilio = `${r.pick(STREET_TYPES)} ${r.pick(STREET_NAMES)}, ${number}${floor ? ', ' + floor : ''}`;
  }
  const cpostal = town.cp + String(r.int(0, 9)) + String(r.int(0, 9)) + String(r.int(1, 9));
  return { domicilio, ciudad: town.ciudad, provincia: town.provincia, cpostal, town };
}

export interface Person {
  readonly nombre: string;
  readonly apellidos: string;
  readonly full: string;
}

export function person(r: SandboxRandom): Person {
  const nombre = r.pick(FIRST_NAMES);
  let second = r.pick(SURNAMES);
  const first = r.pick(SURNAMES);
  if (second === first) second = r.pick(SURNAMES);
  const apellidos = `${first} ${second}`;
  return { nombre, apellidos, full: `${nombre} ${apellidos}` };
}

/** A private address at the reserved example.com domain. */
export function personalEmail(r: SandboxRandom, p: Person): string {
  const surname = p.apellidos.split(' ')[0] ?? '';
  return `${slug(p.nombre, 10)}.${slug(surname, 12)}${r.int(1, 99)}@example.com`;
}

/** A company address: a mailbox at `<company>.example.com`. */
export function companyEmail(mailbox: string, company: string): string {
  return `${mailbox}@${slug(company)}.example.com`;
}

/** `value()` with probability `p`, otherwise an empty cell. */
export function maybe(r: SandboxRandom, p: number, value: () => string): string {
  return r.chance(p) ? value() : '';
}
