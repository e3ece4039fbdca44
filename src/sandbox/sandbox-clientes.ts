/**
 * The sandbox customers: 30 rows of the 150-column customer export.
 */
import type { ClienteColumn } from './sandbox-columns.js';
import type { Generated, Person, Place, SandboxRecord } from './sandbox-common.js';
import { companyEmail, maybe, person, personalEmail, place } from './sandbox-common.js';
import {
  MS_PER_DAY, cif, decimal, fmtDate, fmtDateTime, iban, landline, mobile, money, nif, pad,
  slug, spacedPhone, utc, workingTime,
} from './sandbox-format.js';
import {
  AGENTS, BANKS, CARRIERS, COMPANY_FORMS, CONTACT_ROLES, CUSTOMER_REMARKS, ERP_USERS,
  OFFICE_HOURS, PAYMENT_TERMS, PLACE_WORDS, SURNAMES, TRADES, TRADE_SECTORS,
} from './sandbox-names.js';
import { SandboxRandom } from './sandbox-random.js';

export const CLIENTES_COUNT = 30;

/** What works and notices need to know about a customer. */
export interface ClienteRef {
  readonly id: string;
  readonly nombre: string;
  readonly place: Place;
}

type Tipo = 'EMPRESA' | 'PARTICULAR' | 'PROFESIONAL' | 'ADMINISTRACIÓN' | 'COMUNIDAD';

// A few rows are fixed by index so that every quirk of a real export is
// present whatever the generator draws.
const PADDED_NAME = new Set([3, 17, 26]); // fixed-width ERPs pad names with spaces
const QUOTED_NAME = 6; // a double quote inside a cell
const BLOCKED = 4; // blocked for non-payment; a remark with a `;`
const MULTILINE_REMARK = 11;
const NO_EMAIL = new Set([5, 23]);
const NO_PHONE = 15;
const NO_CIF = 9; // a private customer whose NIF was never recorded
const TIPO_BY_INDEX: Readonly<Record<number, Tipo>> = { 9: 'PARTICULAR', 12: 'ADMINISTRACIÓN', 21: 'COMUNIDAD', 27: 'PROFESIONAL' };

function tipoFor(r: SandboxRandom, i: number): Tipo {
  const fixed = TIPO_BY_INDEX[i];
  if (fixed) return fixed;
  if (i === QUOTED_NAME || i === BLOCKED || PADDED_NAME.has(i)) return 'EMPRESA';
  const x = r.next();
  return x < 0.72 ? 'EMPRESA' : x < 0.88 ? 'PARTICULAR' : 'PROFESIONAL';
}

interface Identity {
  readonly nombre: string;
  readonly taxId: string;
  readonly sector: string;
  /** The person, for a private customer. */
  readonly owner?: Person;
}

function identity(r: SandboxRandom, i: number, tipo: Tipo, addr: Place): Identity {
  const province = addr.town.cp;
  switch (tipo) {
    case 'PARTICULAR': {
      const p = person(r);
      return { nombre: p.full, taxId: nif(r), sector: 'PARTICULAR', owner: p };
    }
    case 'PROFESIONAL': {
      const p = person(r);
      const trade = r.pick(['Fontanería', 'Electricidad', 'Carpintería', 'Reformas']);
      return { nombre: `${trade} ${p.nombre} ${p.apellidos.split(' ')[0]}`, taxId: nif(r), sector: 'SERVICIOS' };
    }
    case 'ADMINISTRACIÓN':
      return { nombre: 'Mancomunidad de Servicios de la Vega Alta', taxId: cif(r, 'P', province), sector: 'ADMINISTRACIÓN PÚBLICA' };
    case 'COMUNIDAD': {
      // Named after its building: the street and number of its address.
      const [street, number] = addr.domicilio.split(', ');
      return { nombre: `Comunidad de Propietarios ${street}, ${number}`, taxId: cif(r, 'H', province), sector: 'COMUNIDAD DE PROPIETARIOS' };
    }
    case 'EMPRESA': {
      const { form, letter } = r.pick(COMPANY_FORMS);
      const trade = r.pick(TRADES);
      const surname = r.pick(SURNAMES);
      let nombre: string;
      if (i === QUOTED_NAME) {
        nombre = `Suministros "El Olivar" ${form}`;
      } else {
        const pattern = r.int(0, 4);
        nombre =
          pattern === 0 ? `${surname} y ${r.pick(SURNAMES)} ${form}`
          : pattern === 1 ? `${trade} ${r.pick(PLACE_WORDS)} ${form}`
          : pattern === 2 ? `${trade} ${surname} e Hijos ${form}`
          : `${trade} ${surname} ${form}`;
      }
      const sector = TRADE_SECTORS[trade] ?? r.pick(['INDUSTRIA', 'CONSTRUCCIÓN', 'SERVICIOS']);
      return { nombre, taxId: cif(r, letter, province), sector };
    }
  }
}

/** One customer row. `at` is the import that last wrote it. */
function cliente(r: SandboxRandom, i: number, at: number, taken: Set<string>): { rec: SandboxRecord<ClienteColumn>; ref: ClienteRef } {
  const id = `C${pad(i + 1, 6)}`;
  const tipo = tipoFor(r, i);
  const addr = place(r, undefined, tipo !== 'PARTICULAR' && tipo !== 'COMUNIDAD');
  let who = identity(r, i, tipo, addr);
  while (taken.has(who.nombre)) who = identity(r, i, tipo, addr);
  taken.add(who.nombre);
  const company = tipo !== 'PARTICULAR';
  const town = addr.town;
  const contact = person(r);
  const hasContact = tipo !== 'PARTICULAR' && r.chance(0.55);
  const latest = at - 2 * MS_PER_DAY;
  const sepa = r.chance(0.35);
  const bank = r.pick(BANKS);
  const hasBank = sepa || r.chance(0.4);
  const canarias = town.provincia === 'Las Palmas';
  const profesional = tipo === 'PROFESIONAL';

  const rec: SandboxRecord<ClienteColumn> = {
    CODIGO: id,
    '01_NOMBRE_COMERCIAL': who.nombre + (PADDED_NAME.has(i) ? '   ' : ''),
    '02_RAZON_SOCIAL': r.chance(0.8) ? who.nombre.toUpperCase() : who.nombre,
    '03_NOMBRE_CONTACTO': hasContact ? contact.nombre : '',
    '04_APELLIDOS_CONTACTO': hasContact ? contact.apellidos : '',
    '05_TIPO_CLIENTE': tipo === 'COMUNIDAD' ? 'EMPRESA' : tipo,
    '06_CIF': i === NO_CIF ? '' : who.taxId,
    '07_DOMICILIO': addr.domicilio,
    '08_CIUDAD': addr.ciudad,
    '09_PROVINCIA': addr.provincia,
    '10_PAIS': 'ESPAÑA',
    '11_ZONA': maybe(r, 0.5, () => town.zona),
    '12_CPOSTAL': addr.cpostal,
    '13_TELEFONO2': maybe(r, 0.25, () => landline(r, town.tel)),
    '14_FAX': company ? maybe(r, 0.15, () => landline(r, town.tel)) : '',
    '15_MOVIL': maybe(r, 0.55, () => mobile(r)),
    '16_PERSONA_CONTACTO': hasContact && r.chance(0.6) ? contact.full : '',
    '17_CARGO_CONTACTO': hasContact ? maybe(r, 0.6, () => r.pick(CONTACT_ROLES)) : '',
    '18_FECHA_ALTA': fmtDate(workingTime(r, utc(2003, 1, 1), utc(2025, 6, 30))),
    '20_NOMBRE_FISCAL': maybe(r, 0.35, () => who.nombre.toUpperCase()),
    TELEFONO: i === NO_PHONE ? '' : tipo === 'PARTICULAR' ? mobile(r) : r.chance(0.2) ? spacedPhone(landline(r, town.tel)) : landline(r, town.tel),
    EMAIL: NO_EMAIL.has(i) ? '' : company ? companyEmail(r.pick(['info', 'contacto', 'administracion']), who.nombre) : personalEmail(r, who.owner ?? person(r)),
    EMAIL_FACTURACION: company ? maybe(r, 0.4, () => companyEmail('facturas', who.nombre)) : '',
    EMAIL_COMERCIAL: company ? maybe(r, 0.2, () => companyEmail('comercial', who.nombre)) : '',
    WWW: company && tipo !== 'COMUNIDAD' ? maybe(r, 0.45, () => `www.${slug(who.nombre)}.example.com`) : '',
    PORCENTAJE_RETENCION: profesional ? r.pick(['15,00', '7,00']) : '0,00',
    FORMA_PAGO: sepa ? 'DOMICILIACIÓN SEPA' : r.pick(PAYMENT_TERMS),
    DIA_PAGO_1: maybe(r, 0.3, () => r.pick(['5', '10', '15', '20', '25', '30'])),
    DIA_PAGO_2: maybe(r, 0.1, () => r.pick(['15', '30'])),
    MES_NO_PAGO: maybe(r, 0.07, () => 'AGOSTO'),
    BANCO: hasBank ? bank.name : '',
    IBAN: hasBank ? iban(r, bank.code) : '',
    BIC: hasBank && r.chance(0.6) ? bank.bic : '',
    MANDATO_SEPA: sepa ? `SEPA-${id}` : '',
    FECHA_MANDATO_SEPA: sepa ? fmtDate(workingTime(r, utc(2012, 1, 1), latest)) : '',
    DTO_PRONTO_PAGO: r.pick(['0,00', '0,00', '1,00', '2,00', '3,00']),
    DTO_COMERCIAL: r.pick(['0,00', '5,00', '10,00', '12,50', '15,00', '20,00']),
    DTO_2: maybe(r, 0.1, () => r.pick(['2,00', '3,00', '5,00'])),
    RECARGO_EQUIVALENCIA: who.sector === 'COMERCIO' && r.chance(0.5) ? 'S' : 'N',
    REGIMEN_IVA: canarias ? 'CANARIAS (IGIC)' : 'GENERAL',
    TIPO_IVA: canarias ? '7,00' : tipo === 'COMUNIDAD' || tipo === 'PARTICULAR' ? '10,00' : '21,00',
    RIESGO_MAXIMO: maybe(r, 0.45, () => money(r.int(300_000, 6_000_000))),
    RIESGO_ACTUAL: maybe(r, 0.5, () => money(r.int(0, 2_500_000))),
    TARIFA: r.pick(['PVP', 'TARIFA 1', 'TARIFA 2', 'DISTRIBUIDOR']),
    RUTA: maybe(r, 0.25, () => `RUTA ${pad(r.int(1, 24), 2)}`),
    TRANSPORTISTA: maybe(r, 0.5, () => r.pick(CARRIERS)),
    PORTES: maybe(r, 0.75, () => r.pick(['PAGADOS', 'DEBIDOS'])),
    IDIOMA: 'ES',
    DIVISA: 'EUR',
    FECHA_ULTIMA_VENTA: maybe(r, 0.8, () => fmtDate(workingTime(r, utc(2024, 1, 1), latest))),
    FECHA_ULTIMO_COBRO: maybe(r, 0.75, () => fmtDate(workingTime(r, utc(2024, 1, 1), latest))),
    IMPORTE_VENTAS_ANIO: maybe(r, 0.88, () => money(r.int(50_000, 25_000_000))),
    IMPORTE_VENTAS_ANIO_ANT: maybe(r, 0.7, () => money(r.int(50_000, 25_000_000))),
    SALDO_PENDIENTE: r.chance(0.3) ? '0,00' : money(r.int(1_000, 1_500_000)),
    LIMITE_CREDITO: maybe(r, 0.38, () => money(r.int(10, 600) * 10_000)),
    CUENTA_CONTABLE: `430${pad(i + 1, 7)}`,
    CUENTA_VENTAS: r.pick(['7000000000', '7000000001', '7050000000']),
    SERIE_FACTURACION: r.pick(['A', 'A', 'A', 'B', 'R']),
    COPIAS_FACTURA: r.pick(['1', '1', '2', '3']),
    ENVIO_FACTURA_EMAIL: r.chance(0.6) ? 'S' : 'N',
    FACTURA_ELECTRONICA: tipo === 'ADMINISTRACIÓN' ? 'S' : 'N',
    BLOQUEADO: i === BLOCKED ? 'S' : 'N',
    MOTIVO_BLOQUEO: i === BLOCKED ? 'IMPAGADO' : '',
    LOPD_ACEPTADO: r.chance(0.7) ? 'S' : 'N',
    FECHA_LOPD: maybe(r, 0.5, () => fmtDate(workingTime(r, utc(2018, 5, 25), latest))),
    PUBLICIDAD: r.chance(0.3) ? 'S' : 'N',
    OBSERVACIONES:
      i === BLOCKED ? 'Pagar siempre al contado; tiene impagados'
      : i === MULTILINE_REMARK ? 'Cliente preferente.\r\nCerrado en agosto.\r\nLlamar antes de ir.'
      : maybe(r, 0.3, () => r.pick(CUSTOMER_REMARKS)),
    OBSERVACIONES_INTERNAS: maybe(r, 0.1, () => r.pick(CUSTOMER_REMARKS)),
    SECTOR: maybe(r, 0.7, () => who.sector),
    ORIGEN: maybe(r, 0.3, () => r.pick(['COMERCIAL', 'TELÉFONO', 'RECOMENDACIÓN', 'WEB', 'FERIA'])),
    CNAE: company ? maybe(r, 0.4, () => String(r.int(1000, 9609))) : '',
    NUM_EMPLEADOS: company ? maybe(r, 0.17, () => String(r.int(2, 240))) : '',
    USUARIO_ALTA: r.pick(ERP_USERS),
    USUARIO_MODIFICACION: r.pick(ERP_USERS),
    FECHA_MODIFICACION: fmtDateTime(workingTime(r, at - 40 * MS_PER_DAY, latest)),
    CODIGO_ANTIGUO: maybe(r, 0.3, () => pad(i + 3, 5)),
    REFERENCIA_EXTERNA: maybe(r, 0.05, () => `EXT-${r.digits(8)}`),
  };

  if (tipo === 'ADMINISTRACIÓN') {
    rec.CODIGO_DIR3_OFICINA = `L01${r.digits(6)}`;
    rec.CODIGO_DIR3_ORGANO = `L01${r.digits(6)}`;
    rec.CODIGO_DIR3_UNIDAD = `L01${r.digits(6)}`;
    rec.AVISO_AL_FACTURAR = 'Factura electrónica (FACe)';
  }
  if (rec.RIESGO_MAXIMO && r.chance(0.3)) {
    rec.RIESGO_ASEGURADO = money(r.int(200_000, 3_000_000));
    rec.ASEGURADORA_CREDITO = r.pick(['CESCE', 'CRÉDITO Y CAUCIÓN', 'SOLUNION']);
  }
  if (r.chance(0.7)) {
    rec.AGENTE = r.pick(AGENTS);
    rec.COMISION_AGENTE = r.pick(['0,00', '2,00', '3,00', '5,00']);
  }
  if (r.chance(0.05)) rec['19_FECHA_BAJA'] = fmtDate(workingTime(r, utc(2025, 1, 1), latest));
  if (company && r.chance(0.17)) {
    rec.LATITUD = decimal(town.lat + (r.next() - 0.5) * 0.05, 6);
    rec.LONGITUD = decimal(town.lon + (r.next() - 0.5) * 0.05, 6);
  }
  addAddresses(r, rec, who.nombre);
  addContacts(r, rec, who.nombre);
  addClassification(r, rec);
  for (let m = 1; m <= 12; m++) {
    if (r.chance(0.5)) rec[`VENTAS_MES_${pad(m, 2)}` as ClienteColumn] = money(r.int(20_000, 2_500_000));
  }
  if (r.chance(0.12)) {
    rec.HORARIO_APERTURA = r.pick(['7:30', '8:00', '9:00', '10:00']);
    rec.HORARIO_CIERRE = r.pick(['14:00', '15:00', '19:00', '20:30']);
    rec.DIA_CIERRE_SEMANAL = r.pick(['LUNES', 'SÁBADO', 'DOMINGO']);
  }
  if (r.chance(0.1)) {
    const from = utc(2026, 8, r.int(1, 10));
    rec.VACACIONES_DESDE = fmtDate(from);
    rec.VACACIONES_HASTA = fmtDate(from + r.int(14, 21) * MS_PER_DAY);
  }
  for (let k = 1; k <= 8; k++) {
    if (r.chance(0.03)) rec[`CAMPO_LIBRE_${pad(k, 2)}` as ClienteColumn] = r.pick(['S', 'N', 'PENDIENTE', 'REVISAR', String(r.int(10, 500))]);
  }
  return { rec, ref: { id, nombre: who.nombre, place: addr } };
}

/** Delivery and invoicing addresses, for the few customers that have them. */
function addAddresses(r: SandboxRandom, rec: SandboxRecord<ClienteColumn>, nombre: string): void {
  for (const kind of ['ENVIO', 'FACT'] as const) {
    if (!r.chance(kind === 'ENVIO' ? 0.2 : 0.12)) continue;
    const other = place(r);
    const set = (suffix: string, value: string): void => {
      rec[`DIR_${kind}_${suffix}` as ClienteColumn] = value;
    };
    set('NOMBRE', r.chance(0.5) ? nombre : person(r).full);
    set('DOMICILIO', other.domicilio);
    set('CIUDAD', other.ciudad);
    set('PROVINCIA', other.provincia);
    set('CPOSTAL', other.cpostal);
    set('PAIS', 'ESPAÑA');
    if (r.chance(0.5)) set('TELEFONO', landline(r, other.town.tel));
    if (r.chance(0.5)) set('HORARIO', r.pick(OFFICE_HOURS));
  }
}

/** Second to fourth contacts: each exists only if the one before it does. */
function addContacts(r: SandboxRandom, rec: SandboxRecord<ClienteColumn>, nombre: string): void {
  for (const [n, p] of [[2, 0.2], [3, 0.45], [4, 0.45]] as const) {
    if (!r.chance(p)) return;
    const who = person(r);
    const set = (suffix: string, value: string): void => {
      rec[`CONTACTO${n}_${suffix}` as ClienteColumn] = value;
    };
    set('NOMBRE', who.full);
    if (r.chance(0.6)) set('CARGO', r.pick(CONTACT_ROLES));
    if (r.chance(0.7)) set('TELEFONO', mobile(r));
    if (r.chance(0.75)) set('EMAIL', companyEmail(slug(who.nombre, 12), nombre));
    if (r.chance(0.15)) set('OBSERVACIONES', r.pick(CUSTOMER_REMARKS));
  }
}

function addClassification(r: SandboxRandom, rec: SandboxRecord<ClienteColumn>): void {
  if (r.chance(0.12)) rec.GRUPO_EMPRESA = `GRU${pad(r.int(1, 60), 3)}`;
  if (r.chance(0.12)) rec.CADENA = `CAD${pad(r.int(1, 40), 3)}`;
  if (r.chance(0.2)) rec.CENTRAL_COMPRAS = `CEN${pad(r.int(1, 50), 3)}`;
  if (r.chance(0.15)) rec.CATEGORIA = `CAT${pad(r.int(1, 45), 3)}`;
  if (r.chance(0.15)) rec.SUBCATEGORIA = `SUB${pad(r.int(1, 40), 3)}`;
  if (r.chance(0.15)) rec.CLASIFICACION_ABC = r.pick(['A', 'B', 'C']);
}

/** The customers, each written by the import at `at[i]`. */
export function generateClientes(at: readonly number[]): Generated<ClienteColumn, ClienteRef> {
  const r = new SandboxRandom(0x0c11e4e5);
  const taken = new Set<string>();
  const records: SandboxRecord<ClienteColumn>[] = [];
  const refs: ClienteRef[] = [];
  for (let i = 0; i < CLIENTES_COUNT; i++) {
    const { rec, ref } = cliente(r, i, at[i] ?? 0, taken);
    records.push(rec);
    refs.push(ref);
  }
  return { records, refs };
}
