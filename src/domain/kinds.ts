/**
 * The four record kinds Mirador serves, their highlighted fields (in the order
 * of service.md §2, which is the order of keys in every item), and the column
 * names the built-in mapping recognises for each field.
 */

export const KINDS = ['clientes', 'articulos', 'obras', 'avisos-correctivo'] as const;
export type Kind = (typeof KINDS)[number];

export type FieldType = 'string' | 'number' | 'date';

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  /**
   * Column names recognised by the default mapping, best first. Compared after
   * `normaliseColumnName`. The field's own name is always tried first and is
   * not repeated here.
   */
  readonly columns: readonly string[];
}

export interface KindSpec {
  readonly kind: Kind;
  /** Highlighted fields, `id_erp` first, in item key order. */
  readonly fields: readonly FieldSpec[];
}

const s = (name: string, columns: string[]): FieldSpec => ({ name, type: 'string', columns });

// For id_erp the contract fixes the precedence: ID_ERP, then CODIGO.
const ID_ERP = s('id_erp', ['CODIGO', 'ID', 'COD', 'CODIGO_ERP']);

export const KIND_SPECS: Readonly<Record<Kind, KindSpec>> = {
  clientes: {
    kind: 'clientes',
    fields: [
      ID_ERP,
      s('nombre', ['NOMBRE_COMERCIAL', 'NOMBRE', 'RAZON_SOCIAL', 'NOMBRE_FISCAL', 'DENOMINACION']),
      s('cif', ['CIF', 'NIF', 'CIF_NIF', 'NIF_CIF', 'DNI', 'VAT']),
      s('email', ['EMAIL', 'E_MAIL', 'CORREO', 'CORREO_ELECTRONICO', 'MAIL']),
      s('telefono', ['TELEFONO', 'TELEFONO1', 'TELEFONO_1', 'TLF', 'TFNO', 'MOVIL']),
      s('direccion', ['DIRECCION', 'DOMICILIO', 'DIRECCION_1', 'CALLE']),
    ],
  },
  articulos: {
    kind: 'articulos',
    fields: [
      ID_ERP,
      s('codigo', ['CODIGO', 'REFERENCIA', 'CODIGO_ARTICULO', 'REF']),
      s('nombre', ['NOMBRE', 'DESCRIPCION', 'DENOMINACION', 'DESCRIPCION_CORTA']),
      s('unidad', ['UNIDAD', 'UNIDAD_MEDIDA', 'UD', 'UDS', 'UNIDAD_VENTA']),
      { name: 'precio', type: 'number', columns: ['PRECIO_VENTA', 'PVP', 'PRECIO_VENTA_1', 'TARIFA', 'PRECIO_1'] },
    ],
  },
  obras: {
    kind: 'obras',
    fields: [
      ID_ERP,
      s('codigo', ['CODIGO', 'CODIGO_OBRA', 'NUM_OBRA', 'REFERENCIA']),
      s('nombre', ['NOMBRE', 'NOMBRE_OBRA', 'TITULO', 'DENOMINACION']),
      s('descripcion', ['DESCRIPCION', 'DESCRIPCION_OBRA', 'DETALLE']),
      s('cliente_id_erp', ['CLIENTE', 'CODIGO_CLIENTE', 'COD_CLIENTE', 'ID_CLIENTE', 'CLIENTE_ID']),
      s('estado', ['ESTADO', 'SITUACION', 'ESTADO_OBRA']),
    ],
  },
  'avisos-correctivo': {
    kind: 'avisos-correctivo',
    fields: [
      ID_ERP,
      s('codigo', ['CODIGO', 'CODIGO_AVISO', 'NUM_AVISO', 'NUMERO']),
      { name: 'fecha', type: 'date', columns: ['FECHA_AVISO', 'FECHA_ALTA', 'FECHA_ENTRADA'] },
      s('cliente_id_erp', ['CLIENTE', 'CODIGO_CLIENTE', 'COD_CLIENTE', 'ID_CLIENTE', 'CLIENTE_ID']),
      s('obra_id_erp', ['OBRA', 'CODIGO_OBRA', 'COD_OBRA', 'ID_OBRA', 'OBRA_ID']),
      s('descripcion', ['DESCRIPCION', 'DESCRIPCION_AVISO', 'AVERIA', 'MOTIVO', 'DETALLE']),
      s('estado', ['ESTADO', 'SITUACION', 'ESTADO_AVISO']),
      s('prioridad', ['PRIORIDAD', 'URGENCIA']),
    ],
  },
};

export function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

/**
 * Normalises a column name for comparison: case, accents, spaces and
 * underscores are ignored, and a leading numeric prefix such as `01_` is
 * dropped, so `01_NOMBRE_COMERCIAL` matches `nombre comercial`.
 */
export function normaliseColumnName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/^\s*\d+[\s_.-]+/, '')
    .replace(/[\s_\-.]+/g, '');
}
