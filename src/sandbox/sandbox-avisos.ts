/**
 * The sandbox corrective notices: 30 rows of the 60-column notices export.
 * A notice is for a customer and, often, for one of that customer's works.
 */
import type { ClienteRef } from './sandbox-clientes.js';
import type { AvisoColumn } from './sandbox-columns.js';
import type { Generated, Place, SandboxRecord } from './sandbox-common.js';
import { maybe, person } from './sandbox-common.js';
import {
  MS_PER_DAY, fmtDate, fmtDateTime, mobile, money, nif, pad, plate, workingTime, decimal,
} from './sandbox-format.js';
import {
  CUSTOMER_REMARKS, DIAGNOSES, EQUIPMENT, FAULTS, SOLUTIONS, STAFF, TECH_REMARKS,
} from './sandbox-names.js';
import type { ObraRef } from './sandbox-obras.js';
import { SandboxRandom } from './sandbox-random.js';

export const AVISOS_COUNT = 30;

const ESTADOS = [
  'PENDIENTE', 'ASIGNADO', 'EN CURSO', 'EN ESPERA DE MATERIAL', 'RESUELTO', 'RESUELTO', 'CERRADO', 'ANULADO',
] as const;
const PRIORIDADES = ['BAJA', 'MEDIA', 'MEDIA', 'ALTA', 'URGENTE'] as const;
const EQUIPMENT_BRANDS = ['Termalia', 'Climanor', 'Hidrova', 'Voltaris'] as const;
const HOURLY_RATE_CENTS = 3850;

// Rows fixed by index: see sandbox-clientes.ts.
const MULTILINE_DESCRIPTION = 8;
const WITHOUT_WORK = new Set([0, 5]); // at least these have an empty OBRA
const WITH_WORK = new Set([1, 2]); // and at least these a work

/**
 * The notices, each written by the import at `at[i]`, for the given customers
 * and works. `articulos` are the article codes technicians can use.
 */
export function generateAvisos(
  at: readonly number[],
  clientes: readonly ClienteRef[],
  obras: readonly ObraRef[],
  articulos: readonly string[],
): Generated<AvisoColumn, string> {
  const r = new SandboxRandom(0xa7150500);
  const records: SandboxRecord<AvisoColumn>[] = [];
  const ids: string[] = [];
  for (let i = 0; i < AVISOS_COUNT; i++) {
    const id = `AV${pad(i + 1, 7)}`;
    const importAt = at[i] ?? 0;
    // With a work (one already started on site), the customer is the work's;
    // without, any customer, at their own address.
    const open = obras.filter((o) => o.inicio !== null && o.inicio < importAt - 30 * MS_PER_DAY);
    const withWork = open.length > 0 && (WITH_WORK.has(i) || (!WITHOUT_WORK.has(i) && r.chance(0.6)));
    const obra = withWork ? r.pick(open) : undefined;
    const clienteId = obra ? obra.clienteId : r.pick(clientes).id;
    const cliente = clientes.find((c) => c.id === clienteId);
    if (!cliente) throw new Error(`sandbox: work ${obra?.id} names unknown customer ${clienteId}`);
    const site: Place = obra ? obra.place : cliente.place;

    const estado = r.pick(ESTADOS);
    const assigned = estado !== 'PENDIENTE' && estado !== 'ANULADO';
    const worked = estado === 'EN CURSO' || estado === 'EN ESPERA DE MATERIAL' || estado === 'RESUELTO' || estado === 'CERRADO';
    const done = estado === 'RESUELTO' || estado === 'CERRADO';
    const tipo = r.pick(['CORRECTIVO', 'CORRECTIVO', 'CORRECTIVO', 'GARANTÍA', 'URGENCIA 24H']);
    const warranty = tipo === 'GARANTÍA';
    const billable = !warranty && r.chance(0.8);

    // Reported, then an appointment within a week, then the visit; all before the import.
    const earliest = Math.max(importAt - 150 * MS_PER_DAY, (obra?.inicio ?? 0) + MS_PER_DAY);
    const fecha = workingTime(r, earliest, importAt - 10 * MS_PER_DAY);
    const cita = workingTime(r, fecha + MS_PER_DAY, fecha + 7 * MS_PER_DAY);
    const inicio = cita + r.int(0, 90) * 60_000;
    const hours = r.int(50, 800) / 100;
    const fin = inicio + Math.round(hours * 3600) * 1000;
    const labour = Math.round(hours * HOURLY_RATE_CENTS);
    const material = r.chance(0.5) ? r.int(500, 150_000) : 0;
    const travel = r.chance(0.6) ? r.int(1500, 6000) : 0;
    const fault = r.pick(FAULTS);
    const caller = person(r);
    const signer = person(r);

    const rec: SandboxRecord<AvisoColumn> = {
      CODIGO: id,
      // Some ERPs stamp the time of the call, some only the day.
      FECHA: r.chance(0.4) ? fmtDateTime(fecha) : fmtDate(fecha),
      CLIENTE: clienteId,
      OBRA: obra?.id ?? '',
      DESCRIPCION: i === MULTILINE_DESCRIPTION ? `${fault}.\r\nEl cliente indica: "Llamar antes de ir"` : fault,
      ESTADO: estado,
      PRIORIDAD: r.pick(PRIORIDADES),
      TIPO_AVISO: tipo,
      ORIGEN: r.pick(['TELÉFONO', 'TELÉFONO', 'EMAIL', 'APP', 'WEB', 'COMERCIAL']),
      PERSONA_AVISA: maybe(r, 0.78, () => caller.full),
      TELEFONO_AVISA: maybe(r, 0.72, () => mobile(r)),
      DIRECCION: site.domicilio,
      CIUDAD: site.ciudad,
      PROVINCIA: site.provincia,
      CPOSTAL: site.cpostal,
      TECNICO_ASIGNADO: assigned ? r.pick(STAFF) : '',
      TECNICO_AUXILIAR: assigned ? maybe(r, 0.25, () => r.pick(STAFF)) : '',
      FECHA_CITA: assigned ? fmtDate(cita) : '',
      HORA_CITA: assigned ? `${pad(new Date(cita).getUTCHours(), 2)}:${r.pick(['00', '30'])}` : '',
      FECHA_INICIO: worked ? fmtDateTime(inicio) : '',
      FECHA_FIN: done ? fmtDateTime(fin) : '',
      HORAS_MANO_OBRA: done ? decimal(hours, 2) : '',
      COSTE_MANO_OBRA: done ? money(labour) : '',
      COSTE_MATERIAL: done && material > 0 ? money(material) : '',
      COSTE_DESPLAZAMIENTO: worked && travel > 0 ? money(travel) : '',
      IMPORTE_FACTURAR: done && billable ? money(Math.round((labour + material + travel) * 1.3)) : '',
      FACTURABLE: billable ? 'S' : 'N',
      FACTURADO: estado === 'CERRADO' && billable ? 'S' : 'N',
      NUM_FACTURA: estado === 'CERRADO' && billable ? `FV${new Date(fin).getUTCFullYear()}/${pad(r.int(1, 99_999), 5)}` : '',
      EN_GARANTIA: warranty ? 'S' : 'N',
      RUTA: maybe(r, 0.4, () => `RUTA ${pad(r.int(1, 24), 2)}`),
      VEHICULO: worked ? maybe(r, 0.7, () => plate(r)) : '',
      KM_RECORRIDOS: worked && travel > 0 ? String(r.int(3, 180)) : '',
      DIAGNOSTICO: done ? r.pick(DIAGNOSES) : '',
      SOLUCION: done ? r.pick(SOLUTIONS) : '',
      FIRMA_CLIENTE: done ? (r.chance(0.8) ? 'S' : 'N') : '',
      FOTOS: worked ? maybe(r, 0.4, () => ['', '', 'SERVIDOR', 'AVISOS', id, ''].join('\\')) : '',
      ENCUESTA_SATISFACCION: estado === 'CERRADO' ? maybe(r, 0.5, () => String(r.int(1, 5))) : '',
      OBSERVACIONES: maybe(r, 0.23, () => r.pick(CUSTOMER_REMARKS)),
      OBSERVACIONES_TECNICO: worked ? maybe(r, 0.3, () => r.pick(TECH_REMARKS)) : '',
      USUARIO_ALTA: r.pick(['WEB', 'CENTRALITA', 'JMARTINEZ', 'ADMIN', 'APP']),
      FECHA_MODIFICACION: fmtDateTime(workingTime(r, Math.max(fecha, importAt - 20 * MS_PER_DAY), importAt - MS_PER_DAY)),
    };
    if (r.chance(0.4)) {
      rec.CONTRATO_MANTENIMIENTO = `CM-${pad(r.int(1, 3000), 5)}`;
      rec.TIPO_CONTRATO = r.pick(['ANUAL', 'SEMESTRAL', 'TRIMESTRAL', 'TODO RIESGO']);
    }
    if (r.chance(0.6)) {
      const kind = r.pick(EQUIPMENT);
      rec.EQUIPO = `${kind.charAt(0).toUpperCase()}${kind.slice(1)} ${r.pick(EQUIPMENT_BRANDS)}`;
      if (r.chance(0.7)) rec.NUM_SERIE_EQUIPO = r.digits(10);
    }
    if (done && rec.FIRMA_CLIENTE === 'S') {
      rec.NOMBRE_FIRMANTE = signer.full;
      if (r.chance(0.5)) rec.DNI_FIRMANTE = nif(r);
    }
    if (done && material > 0) {
      const used = [`${r.int(1, 6)} x ${r.pick(articulos)}`];
      if (r.chance(0.4)) used.push(`${r.int(1, 20)} x ${r.pick(articulos)}`);
      rec.MATERIAL_UTILIZADO = used.join(', ');
    }
    for (let k = 1; k <= 11; k++) {
      if (r.chance(0.03)) rec[`CAMPO_LIBRE_${pad(k, 2)}` as AvisoColumn] = r.pick(['S', 'N', 'REVISAR']);
    }
    records.push(rec);
    ids.push(id);
  }
  return { records, refs: ids };
}
