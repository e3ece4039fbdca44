/**
 * The sandbox articles: 40 rows of the 60-column article export, a small
 * installer's catalogue in seven families.
 */
import type { ArticuloColumn } from './sandbox-columns.js';
import type { Generated, SandboxRecord } from './sandbox-common.js';
import { maybe } from './sandbox-common.js';
import { MS_PER_DAY, decimal, ean13, fmtDate, money, pad, utc, workingTime } from './sandbox-format.js';
import { SandboxRandom } from './sandbox-random.js';

export const ARTICULOS_COUNT = 40;

interface Product {
  readonly name: string;
  readonly unit: string;
  /** Cost range in euros. */
  readonly cost: readonly [number, number];
  /** An electrical or electronic appliance: eco-tax, serial numbers, guarantee. */
  readonly appliance?: boolean;
  /** Nominal weight of one unit. */
  readonly kg: number;
  /** Length, width and height of the packed unit, for bulky items. */
  readonly mm?: readonly [number, number, number];
}

interface Family {
  readonly prefix: string;
  readonly name: string;
  readonly brands: readonly string[];
  readonly products: readonly Product[];
}

// Brands and suppliers are invented.
const FAMILIES: readonly Family[] = [
  {
    prefix: 'FON', name: 'FONTANERÍA', brands: ['Hidrova', 'Aquaterm', 'Grifesa'],
    products: [
      { name: 'Tubo multicapa 16 mm', unit: 'M', cost: [0.9, 2.4], kg: 0.12 },
      { name: 'Codo latón 1/2"', unit: 'UD', cost: [1.1, 3.5], kg: 0.08 },
      { name: 'Válvula de esfera 3/4"', unit: 'UD', cost: [4, 12], kg: 0.35 },
      { name: 'Grifo monomando lavabo', unit: 'UD', cost: [28, 95], kg: 1.6 },
      { name: 'Llave de paso empotrar 22 mm', unit: 'UD', cost: [9, 24], kg: 0.45 },
    ],
  },
  {
    prefix: 'ELE', name: 'ELECTRICIDAD', brands: ['Voltaris', 'Lumisur', 'Electrón Ibérica'],
    products: [
      { name: 'Cable H07V-K 2,5 mm²', unit: 'M', cost: [0.25, 0.6], kg: 0.03 },
      { name: 'Magnetotérmico 2P 16 A', unit: 'UD', cost: [6, 18], kg: 0.25 },
      { name: 'Diferencial 2P 40 A 30 mA', unit: 'UD', cost: [22, 60], kg: 0.3 },
      { name: 'Pantalla LED 60x60 40 W', unit: 'UD', cost: [14, 38], appliance: true, kg: 2.8, mm: [595, 595, 35] },
      { name: 'Luminaria de emergencia 300 lm', unit: 'UD', cost: [18, 45], appliance: true, kg: 0.6 },
      { name: 'Tubo corrugado 20 mm (rollo 100 m)', unit: 'ROLLO', cost: [11, 22], kg: 4.5 },
    ],
  },
  {
    prefix: 'CLI', name: 'CLIMATIZACIÓN', brands: ['Climanor', 'Termalia'],
    products: [
      { name: 'Split de pared 3,5 kW', unit: 'UD', cost: [420, 890], appliance: true, kg: 38, mm: [800, 300, 250] },
      { name: 'Bomba de calor aire-agua 8 kW', unit: 'UD', cost: [2400, 4600], appliance: true, kg: 96, mm: [1100, 450, 800] },
      { name: 'Termostato programable wifi', unit: 'UD', cost: [35, 120], appliance: true, kg: 0.3 },
      { name: 'Rejilla de impulsión 300x150', unit: 'UD', cost: [8, 26], kg: 0.9 },
      { name: 'Tubería frigorífica 1/4"-3/8"', unit: 'M', cost: [4, 9], kg: 0.25 },
    ],
  },
  {
    prefix: 'TOR', name: 'TORNILLERÍA', brands: ['Ferrostar', 'Fijalia'],
    products: [
      { name: 'Tornillo rosca chapa 4,2x13 (caja 500 uds)', unit: 'CAJA', cost: [6, 14], kg: 1.4 },
      { name: 'Taco nylon 8 mm (bolsa 100 uds)', unit: 'BOLSA', cost: [2, 5], kg: 0.2 },
      { name: 'Varilla roscada M8 1 m', unit: 'UD', cost: [0.8, 2.2], kg: 0.3 },
      { name: 'Anclaje químico 300 ml', unit: 'UD', cost: [7, 16], kg: 0.5 },
    ],
  },
  {
    prefix: 'PIN', name: 'PINTURA', brands: ['Albora', 'Cromalia'],
    products: [
      { name: 'Pintura plástica blanca mate 15 L', unit: 'UD', cost: [24, 70], kg: 22 },
      { name: 'Imprimación antioxidante 4 L', unit: 'UD', cost: [18, 40], kg: 5.2 },
      { name: 'Rodillo antigota 22 cm', unit: 'UD', cost: [3, 9], kg: 0.3 },
      { name: 'Masilla tapagrietas 1 kg', unit: 'KG', cost: [2.5, 6], kg: 1 },
    ],
  },
  {
    prefix: 'HER', name: 'HERRAMIENTAS', brands: ['Durexa', 'Brocatec'],
    products: [
      { name: 'Taladro percutor 18 V', unit: 'UD', cost: [65, 190], appliance: true, kg: 1.9 },
      { name: 'Juego de brocas HSS 19 piezas', unit: 'UD', cost: [9, 28], kg: 0.6 },
      { name: 'Disco de corte inox 125 mm', unit: 'UD', cost: [0.7, 2.1], kg: 0.05 },
      { name: 'Escalera de aluminio 7 peldaños', unit: 'UD', cost: [55, 120], kg: 7.5, mm: [480, 90, 1650] },
    ],
  },
  {
    prefix: 'SAN', name: 'SANEAMIENTO', brands: ['Sanitec Iberia', 'Porcelanas Duero'],
    products: [
      { name: 'Inodoro de tanque bajo', unit: 'UD', cost: [85, 240], kg: 32, mm: [650, 370, 780] },
      { name: 'Plato de ducha resina 120x80', unit: 'UD', cost: [110, 260], kg: 28, mm: [1200, 800, 30] },
      { name: 'Mortero cola C2TE 25 kg', unit: 'SACO', cost: [7, 15], kg: 25 },
      { name: 'Silicona sanitaria transparente 300 ml', unit: 'UD', cost: [2.2, 5.5], kg: 0.4 },
    ],
  },
];

const SUPPLIERS = [
  { code: 'P00112', name: 'Suministros Robledo S.L.' },
  { code: 'P00238', name: 'Almacenes Valverde e Hijos S.L.' },
  { code: 'P00341', name: 'Distribuciones Cierzo S.A.' },
  { code: 'P00457', name: 'Comercial Tejada Hermanos S.L.' },
  { code: 'P00563', name: 'Importaciones Galindo S.L.U.' },
] as const;

const MARGINS = [10, 15, 20, 25, 30, 35, 40, 50] as const;

// Rows fixed by index: see sandbox-clientes.ts.
const PRICE_ON_REQUEST = 7; // no sale price: `precio` is null
const PADDED_DESCRIPTION = 2;
const PADDED_UNIT = 13;
const MULTILINE_REMARK = 19;
const DISCONTINUED = 24; // withdrawn, pointing at its replacement

/** Ten-thousandths of a euro as `1234,5678`, as costs are exported. */
function cost4(tenThousandths: number): string {
  return `${Math.floor(tenThousandths / 10_000)},${pad(tenThousandths % 10_000, 4)}`;
}

/** The photo path on the company's file server, as the ERP stores it. */
function photo(prefix: string, id: string, n: number): string {
  return ['', '', 'SERVIDOR', 'FOTOS', prefix, `${id}_${n}.jpg`].join('\\');
}

/** The articles, each written by the import at `at[i]`. */
export function generateArticulos(at: readonly number[]): Generated<ArticuloColumn, string> {
  const r = new SandboxRandom(0xa271c010);
  const records: SandboxRecord<ArticuloColumn>[] = [];
  const ids: string[] = [];
  for (let i = 0; i < ARTICULOS_COUNT; i++) {
    const fam = r.pick(FAMILIES);
    const product = r.pick(fam.products);
    const brand = r.pick(fam.brands);
    const id = `${fam.prefix}${pad(i + 1, 6)}`;
    const latest = (at[i] ?? 0) - 2 * MS_PER_DAY;
    const costT = r.int(Math.round(product.cost[0] * 10_000), Math.round(product.cost[1] * 10_000));
    const markup = r.pick([25, 30, 35, 40, 50]);
    const saleCents = Math.round((costT * (1 + markup / 100)) / 100);
    const supplier = r.chance(0.9) ? r.pick(SUPPLIERS) : undefined;
    const appliance = product.appliance === true;
    const description = `${product.name} ${brand}`;

    const rec: SandboxRecord<ArticuloColumn> = {
      CODIGO: id,
      DESCRIPCION: description + (i === PADDED_DESCRIPTION ? '    ' : ''),
      DESCRIPCION_LARGA: maybe(r, 0.3, () => `${description}. ${r.pick(['Apto para uso profesional.', 'Uso interior y exterior.', 'Cumple normativa CE.'])}`),
      FAMILIA: fam.name,
      SUBFAMILIA: maybe(r, 0.68, () => `${fam.prefix}-${pad(r.int(1, 20), 2)}`),
      PROVEEDOR: supplier?.code ?? '',
      NOMBRE_PROVEEDOR: supplier?.name ?? '',
      REF_PROVEEDOR: supplier ? maybe(r, 0.75, () => `REF${r.digits(6)}`) : '',
      MARCA: brand,
      MODELO: maybe(r, 0.36, () => `${r.pick(['X', 'ECO', 'PRO', 'M'])}-${r.int(100, 999)}`),
      UNIDAD_MEDIDA: product.unit + (i === PADDED_UNIT ? '  ' : ''),
      PRECIO_COSTE: cost4(costT),
      PRECIO_VENTA: i === PRICE_ON_REQUEST ? '' : money(saleCents),
      PVP: i === PRICE_ON_REQUEST ? '' : money(Math.round(saleCents * 1.21)),
      TIPO_IVA: '21,00',
      STOCK_MINIMO: maybe(r, 0.5, () => String(r.int(2, 50))),
      STOCK_MAXIMO: maybe(r, 0.4, () => String(r.int(60, 500))),
      STOCK_ACTUAL: product.unit === 'M' ? decimal(r.int(0, 80_000) / 100, 2) : String(r.int(0, 400)),
      STOCK_RESERVADO: maybe(r, 0.2, () => String(r.int(1, 40))),
      STOCK_PENDIENTE_RECIBIR: maybe(r, 0.2, () => String(r.int(1, 90))),
      ECOTASA: appliance ? money(r.int(30, 900)) : '',
    };
    for (let k = 1; k <= 5; k++) {
      const margin = r.pick(MARGINS);
      rec[`MARGEN_${k}` as ArticuloColumn] = decimal(margin, 2);
      if (i !== PRICE_ON_REQUEST && r.chance(0.8)) {
        rec[`PRECIO_MARGEN_${k}` as ArticuloColumn] = money(Math.round((costT * (1 + margin / 100)) / 100));
      }
    }
    Object.assign(rec, {
      FOTO_1: maybe(r, 0.55, () => photo(fam.prefix, id, 1)),
      FOTO_2: maybe(r, 0.15, () => photo(fam.prefix, id, 2)),
      FOTO_3: maybe(r, 0.1, () => photo(fam.prefix, id, 3)),
      OBSERVACIONES:
        i === PRICE_ON_REQUEST ? 'Precio bajo consulta; pedir oferta al proveedor'
        : i === MULTILINE_REMARK ? 'Consultar plazo; bajo pedido.\r\nPedido mínimo 10 unidades.'
        : i === DISCONTINUED ? 'Descatalogado por el fabricante'
        : maybe(r, 0.12, () => r.pick(['Pedido mínimo 10 unidades', 'Precio revisado en enero', 'Sustituye a referencia anterior'])),
      EAN13: maybe(r, 0.6, () => ean13(r)),
      PESO_KG: maybe(r, 0.5, () => decimal((product.kg * r.int(95, 105)) / 100, 3)),
      UBICACION: maybe(r, 0.4, () => `${r.pick(['A', 'B', 'C', 'D'])}-${pad(r.int(1, 20), 2)}-${r.int(1, 6)}`),
      ALMACEN: r.pick(['01 CENTRAL', '01 CENTRAL', '02 DELEGACIÓN', '03 FURGONETAS']),
      FECHA_ALTA: fmtDate(workingTime(r, utc(2005, 1, 1), utc(2025, 3, 31))),
      FECHA_ULTIMA_COMPRA: maybe(r, 0.65, () => fmtDate(workingTime(r, utc(2024, 6, 1), latest))),
      FECHA_ULTIMA_VENTA: maybe(r, 0.65, () => fmtDate(workingTime(r, utc(2024, 6, 1), latest))),
      BAJA: i === DISCONTINUED ? 'S' : 'N',
      CONTROL_STOCK: r.chance(0.8) ? 'S' : 'N',
      NUMEROS_SERIE: appliance ? 'S' : 'N',
      LOTES: fam.prefix === 'PIN' ? 'S' : 'N',
      GARANTIA_MESES: appliance ? r.pick(['12', '24', '36']) : '',
      PLAZO_ENTREGA_DIAS: maybe(r, 0.4, () => String(r.int(2, 30))),
      CODIGO_ARANCEL: maybe(r, 0.08, () => r.digits(8)),
      WEB_PUBLICADO: r.chance(0.4) ? 'S' : 'N',
      URL_FICHA_TECNICA: maybe(r, 0.08, () => `https://fichas.example.com/${id}.pdf`),
      CAMPO_LIBRE_01: maybe(r, 0.03, () => r.pick(['S', 'N', 'OFERTA'])),
    } satisfies SandboxRecord<ArticuloColumn>);
    if (product.mm && r.chance(0.8)) {
      const [l, w, h] = product.mm;
      rec.LARGO_MM = String(l);
      rec.ANCHO_MM = String(w);
      rec.ALTO_MM = String(h);
      rec.VOLUMEN_M3 = decimal((l * w * h) / 1e9, 3);
    }
    records.push(rec);
    ids.push(id);
  }
  // The withdrawn article names a replacement from the same catalogue.
  const withdrawn = records[DISCONTINUED];
  if (withdrawn) withdrawn.ARTICULO_SUSTITUTO = ids[DISCONTINUED + 1] ?? '';
  return { records, refs: ids };
}
