/**
 * The sandbox works: 15 rows of the 50-column works export, each for one of
 * the sandbox customers.
 */
import type { ClienteRef } from './sandbox-clientes.js';
import type { ObraColumn } from './sandbox-columns.js';
import type { Generated, Place, SandboxRecord } from './sandbox-common.js';
import { maybe, person, personalEmail, place } from './sandbox-common.js';
import { MS_PER_DAY, decimal, fmtDate, fmtDateTime, mobile, money, pad, workingTime } from './sandbox-format.js';
import { AGENTS, PAYMENT_TERMS, STAFF, WORK_REMARKS, WORK_TYPES } from './sandbox-names.js';
import { SandboxRandom } from './sandbox-random.js';

export const OBRAS_COUNT = 15;

/** What notices need to know about a work. */
export interface ObraRef {
  readonly id: string;
  readonly clienteId: string;
  readonly place: Place;
  /** When work started on site (ms), or null if it has not. */
  readonly inicio: number | null;
}

const ESTADOS = ['PRESUPUESTADA', 'ACEPTADA', 'EN CURSO', 'EN CURSO', 'PARALIZADA', 'FINALIZADA', 'FACTURADA'] as const;

// Rows fixed by index: see sandbox-clientes.ts.
const MULTILINE_DESCRIPTION = 4;

/** The works, each written by the import at `at[i]`, for customers among `clientes`. */
export function generateObras(at: readonly number[], clientes: readonly ClienteRef[]): Generated<ObraColumn, ObraRef> {
  const r = new SandboxRandom(0x0b4a5015);
  const records: SandboxRecord<ObraColumn>[] = [];
  const refs: ObraRef[] = [];
  for (let i = 0; i < OBRAS_COUNT; i++) {
    const id = `OB${pad(i + 1, 6)}`;
    const cliente = r.pick(clientes);
    const importAt = at[i] ?? 0;
    const tipo = r.pick(WORK_TYPES);
    // Most works are in the customer's own town; only some kinds on an industrial estate.
    const business = tipo.startsWith('Instalación') || tipo === 'Adecuación de local comercial';
    const site = place(r, r.chance(0.7) ? cliente.place.town : undefined, business);
    const estado = r.pick(ESTADOS);
    const street = site.domicilio.split(', ')[0] ?? site.domicilio;

    // A work's dates follow its state (budgeted, accepted, started, finished),
    // and all of them that have happened fall before the import.
    const accepted = estado !== 'PRESUPUESTADA';
    const started = accepted && estado !== 'ACEPTADA';
    const finished = estado === 'FINALIZADA' || estado === 'FACTURADA';
    const [fromDays, toDays] = finished ? [700, 420] : started ? [400, 130] : accepted ? [200, 70] : [120, 5];
    const presupuesto = workingTime(r, importAt - fromDays * MS_PER_DAY, importAt - toDays * MS_PER_DAY);
    const aceptacion = presupuesto + r.int(5, 60) * MS_PER_DAY;
    const inicio = aceptacion + r.int(7, 60) * MS_PER_DAY;
    const finPrevista = inicio + r.int(30, 300) * MS_PER_DAY;
    const finReal = inicio + r.int(20, 250) * MS_PER_DAY;

    const budget = r.int(150_000, 25_000_000);
    const progress = finished ? r.int(85, 115) / 100 : started ? r.int(10, 80) / 100 : 0;
    const real = Math.round(budget * progress);
    const hours = r.int(40, 1500);
    const contact = person(r);

    const rec: SandboxRecord<ObraColumn> = {
      CODIGO: id,
      NOMBRE: `${tipo} - ${street}`,
      DESCRIPCION:
        i === MULTILINE_DESCRIPTION
          ? `${tipo} en ${site.domicilio}.\r\nIncluye retirada de escombros; gestión de residuos a cargo del cliente.`
          : `${tipo} en ${site.domicilio}`,
      CLIENTE: cliente.id,
      NOMBRE_CLIENTE: maybe(r, 0.55, () => cliente.nombre),
      ESTADO: estado,
      TIPO_OBRA: tipo,
      FECHA_PRESUPUESTO: fmtDate(presupuesto),
      FECHA_ACEPTACION: accepted ? fmtDate(aceptacion) : '',
      FECHA_INICIO: started ? fmtDate(inicio) : '',
      FECHA_FIN_PREVISTA: accepted ? fmtDate(finPrevista) : '',
      FECHA_FIN_REAL: finished ? fmtDate(finReal) : '',
      IMPORTE_PRESUPUESTADO: money(budget),
      IMPORTE_REAL: started ? money(real) : '',
      IMPORTE_FACTURADO: estado === 'FACTURADA' ? money(real) : started && r.chance(0.4) ? money(Math.round(real * 0.5)) : '',
      COSTE_MATERIAL: started ? maybe(r, 0.8, () => money(Math.round(real * r.int(20, 45) / 100))) : '',
      COSTE_MANO_OBRA: started ? maybe(r, 0.9, () => money(Math.round(real * r.int(15, 35) / 100))) : '',
      COSTE_SUBCONTRATAS: started ? maybe(r, 0.2, () => money(Math.round(real * r.int(5, 20) / 100))) : '',
      HORAS_PREVISTAS: maybe(r, 0.65, () => String(hours)),
      HORAS_REALES: started ? maybe(r, 0.6, () => decimal(Math.round(hours * progress * 10) / 10, 1)) : '',
      MARGEN_PREVISTO: r.pick(['10,00', '15,00', '20,00', '25,00', '30,00']),
      DIRECCION: site.domicilio,
      CIUDAD: site.ciudad,
      PROVINCIA: site.provincia,
      CPOSTAL: site.cpostal,
      PERSONA_CONTACTO: maybe(r, 0.66, () => contact.full),
      TELEFONO_CONTACTO: maybe(r, 0.76, () => mobile(r)),
      EMAIL_CONTACTO: maybe(r, 0.4, () => personalEmail(r, contact)),
      JEFE_OBRA: accepted ? maybe(r, 0.9, () => r.pick(STAFF)) : '',
      ENCARGADO: started ? maybe(r, 0.6, () => r.pick(STAFF)) : '',
      COMERCIAL: maybe(r, 0.7, () => r.pick(AGENTS)),
      NUM_PRESUPUESTO: `P${new Date(presupuesto).getUTCFullYear()}/${pad(r.int(1, 9999), 4)}`,
      NUM_PEDIDO_CLIENTE: accepted ? maybe(r, 0.45, () => `PED-${r.digits(6)}`) : '',
      LICENCIA_OBRA: accepted ? maybe(r, 0.25, () => `LO-${new Date(aceptacion).getUTCFullYear()}-${pad(r.int(1, 9999), 4)}`) : '',
      DOCUMENTOS: maybe(r, 0.4, () => ['', '', 'SERVIDOR', 'OBRAS', id, ''].join('\\')),
      PLANOS: r.chance(0.5) ? 'S' : 'N',
      CERTIFICACIONES: started ? maybe(r, 0.4, () => String(r.int(1, 12))) : '',
      RETENCION_GARANTIA: maybe(r, 0.15, () => r.pick(['5,00', '10,00'])),
      FORMA_PAGO: r.pick(PAYMENT_TERMS),
      OBSERVACIONES: maybe(r, 0.2, () => r.pick(WORK_REMARKS)),
      FECHA_MODIFICACION: fmtDateTime(workingTime(r, importAt - 30 * MS_PER_DAY, importAt - MS_PER_DAY)),
      CAMPO_LIBRE_02: maybe(r, 0.05, () => r.pick(['S', 'N'])),
      CAMPO_LIBRE_03: maybe(r, 0.03, () => 'URGENTE'),
    };
    records.push(rec);
    refs.push({ id, clienteId: cliente.id, place: site, inicio: started ? inicio : null });
  }
  return { records, refs };
}
