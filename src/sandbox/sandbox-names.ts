/**
 * Word lists for the sandbox data. Every person, company, brand and supplier
 * built from them is invented; only the places are real Spanish towns, so that
 * postcodes, provinces and phone prefixes look right.
 */

export const FIRST_NAMES = [
  'Alba', 'Alejandro', 'Amparo', 'Andrés', 'Ángela', 'Begoña', 'Carmen', 'Cristina', 'Daniel',
  'Dolores', 'Elena', 'Enrique', 'Fernando', 'Gonzalo', 'Inés', 'Iñaki', 'Irene', 'Javier',
  'Jesús', 'Jorge', 'José Luis', 'Laura', 'Lucía', 'Manuel', 'María José', 'Marta', 'Miguel',
  'Montserrat', 'Nuria', 'Óscar', 'Pablo', 'Pilar', 'Ramón', 'Raquel', 'Rocío', 'Sergio',
  'Silvia', 'Sofía', 'Teresa', 'Vicente',
] as const;

export const SURNAMES = [
  'Aguado', 'Alcázar', 'Arribas', 'Barrios', 'Bermejo', 'Cabello', 'Calleja', 'Campillo',
  'Carrasco', 'Castaño', 'Cuesta', 'Escribano', 'Fajardo', 'Galindo', 'Garrido', 'Hervás',
  'Ibáñez', 'Lozano', 'Luján', 'Maldonado', 'Manzano', 'Montero', 'Muñoz', 'Navarro', 'Olmedo',
  'Ordóñez', 'Pastor', 'Peña', 'Quintana', 'Robledo', 'Rosales', 'Salcedo', 'Sanz', 'Soler',
  'Tejada', 'Urrutia', 'Valverde', 'Vidal', 'Villalba', 'Zamora',
] as const;

/** Trades that name small Spanish companies ("Talleres Olmedo S.L."). */
export const TRADES = [
  'Talleres', 'Construcciones', 'Reformas', 'Instalaciones', 'Climatización', 'Electricidad',
  'Fontanería', 'Carpintería', 'Cerrajería', 'Pinturas', 'Ferretería', 'Restaurante', 'Hostal',
  'Panadería', 'Clínica Dental', 'Gestoría', 'Mantenimientos', 'Limpiezas', 'Aluminios',
  'Cristalería', 'Transportes', 'Distribuciones', 'Autoescuela', 'Ascensores', 'Residencia',
] as const;

/** Sector of the customer record for each trade family. */
export const TRADE_SECTORS: Readonly<Record<string, string>> = {
  Restaurante: 'HOSTELERÍA', Hostal: 'HOSTELERÍA', Panadería: 'COMERCIO', Ferretería: 'COMERCIO',
  'Clínica Dental': 'SERVICIOS', Gestoría: 'SERVICIOS', Autoescuela: 'SERVICIOS',
  Residencia: 'SERVICIOS', Transportes: 'LOGÍSTICA', Distribuciones: 'LOGÍSTICA',
};

export const PLACE_WORDS = ['del Valle', 'de la Vega', 'del Sur', 'del Norte', 'de la Sierra', 'del Cierzo'] as const;

/** Legal form, and the CIF organisation letter that goes with it. */
export const COMPANY_FORMS = [
  { form: 'S.L.', letter: 'B' },
  { form: 'S.L.', letter: 'B' },
  { form: 'S.L.', letter: 'B' },
  { form: 'S.L.U.', letter: 'B' },
  { form: 'S.L.L.', letter: 'B' },
  { form: 'S.A.', letter: 'A' },
  { form: 'S.Coop.', letter: 'F' },
  { form: 'C.B.', letter: 'E' },
] as const;

export interface Town {
  readonly ciudad: string;
  readonly provincia: string;
  /** First two digits of the postcode, also the province digits of a CIF. */
  readonly cp: string;
  /** Landline area prefix. */
  readonly tel: string;
  readonly lat: number;
  readonly lon: number;
  readonly zona: string;
}

export const TOWNS: readonly Town[] = [
  { ciudad: 'Madrid', provincia: 'Madrid', cp: '28', tel: '91', lat: 40.4168, lon: -3.7038, zona: 'CENTRO' },
  { ciudad: 'Alcalá de Henares', provincia: 'Madrid', cp: '28', tel: '91', lat: 40.482, lon: -3.364, zona: 'CENTRO' },
  { ciudad: 'Barcelona', provincia: 'Barcelona', cp: '08', tel: '93', lat: 41.3874, lon: 2.1686, zona: 'ESTE' },
  { ciudad: 'Sabadell', provincia: 'Barcelona', cp: '08', tel: '93', lat: 41.5433, lon: 2.1094, zona: 'ESTE' },
  { ciudad: 'Valencia', provincia: 'Valencia', cp: '46', tel: '96', lat: 39.4699, lon: -0.3763, zona: 'ESTE' },
  { ciudad: 'Gandia', provincia: 'Valencia', cp: '46', tel: '96', lat: 38.9681, lon: -0.1836, zona: 'ESTE' },
  { ciudad: 'Sevilla', provincia: 'Sevilla', cp: '41', tel: '95', lat: 37.3891, lon: -5.9845, zona: 'SUR' },
  { ciudad: 'Dos Hermanas', provincia: 'Sevilla', cp: '41', tel: '95', lat: 37.283, lon: -5.9209, zona: 'SUR' },
  { ciudad: 'Málaga', provincia: 'Málaga', cp: '29', tel: '95', lat: 36.7213, lon: -4.4214, zona: 'SUR' },
  { ciudad: 'Zaragoza', provincia: 'Zaragoza', cp: '50', tel: '976', lat: 41.6488, lon: -0.8891, zona: 'NORTE' },
  { ciudad: 'Murcia', provincia: 'Murcia', cp: '30', tel: '968', lat: 37.9922, lon: -1.1307, zona: 'SUR' },
  { ciudad: 'Cartagena', provincia: 'Murcia', cp: '30', tel: '968', lat: 37.6257, lon: -0.9966, zona: 'SUR' },
  { ciudad: 'Palma', provincia: 'Illes Balears', cp: '07', tel: '971', lat: 39.5696, lon: 2.6502, zona: 'ISLAS' },
  { ciudad: 'Las Palmas de Gran Canaria', provincia: 'Las Palmas', cp: '35', tel: '928', lat: 28.1235, lon: -15.4363, zona: 'ISLAS' },
  { ciudad: 'Bilbao', provincia: 'Bizkaia', cp: '48', tel: '94', lat: 43.263, lon: -2.935, zona: 'NORTE' },
  { ciudad: 'Getxo', provincia: 'Bizkaia', cp: '48', tel: '94', lat: 43.3569, lon: -3.0116, zona: 'NORTE' },
  { ciudad: 'Valladolid', provincia: 'Valladolid', cp: '47', tel: '983', lat: 41.6523, lon: -4.7245, zona: 'CENTRO' },
  { ciudad: 'Vigo', provincia: 'Pontevedra', cp: '36', tel: '986', lat: 42.2406, lon: -8.7207, zona: 'OESTE' },
  { ciudad: 'A Coruña', provincia: 'A Coruña', cp: '15', tel: '981', lat: 43.3623, lon: -8.4115, zona: 'OESTE' },
  { ciudad: 'Gijón', provincia: 'Asturias', cp: '33', tel: '985', lat: 43.5322, lon: -5.6611, zona: 'NORTE' },
  { ciudad: 'Logroño', provincia: 'La Rioja', cp: '26', tel: '941', lat: 42.4627, lon: -2.445, zona: 'NORTE' },
  { ciudad: 'Pamplona', provincia: 'Navarra', cp: '31', tel: '948', lat: 42.8125, lon: -1.6458, zona: 'NORTE' },
  { ciudad: 'Santander', provincia: 'Cantabria', cp: '39', tel: '942', lat: 43.4623, lon: -3.81, zona: 'NORTE' },
  { ciudad: 'Granada', provincia: 'Granada', cp: '18', tel: '958', lat: 37.1773, lon: -3.5986, zona: 'SUR' },
  { ciudad: 'Córdoba', provincia: 'Córdoba', cp: '14', tel: '957', lat: 37.8882, lon: -4.7794, zona: 'SUR' },
  { ciudad: 'Jerez de la Frontera', provincia: 'Cádiz', cp: '11', tel: '956', lat: 36.685, lon: -6.1261, zona: 'SUR' },
  { ciudad: 'Toledo', provincia: 'Toledo', cp: '45', tel: '925', lat: 39.8628, lon: -4.0273, zona: 'CENTRO' },
  { ciudad: 'Salamanca', provincia: 'Salamanca', cp: '37', tel: '923', lat: 40.9701, lon: -5.6635, zona: 'OESTE' },
  { ciudad: 'Lleida', provincia: 'Lleida', cp: '25', tel: '973', lat: 41.6176, lon: 0.62, zona: 'ESTE' },
  { ciudad: 'Albacete', provincia: 'Albacete', cp: '02', tel: '967', lat: 38.9943, lon: -1.8585, zona: 'CENTRO' },
  { ciudad: 'León', provincia: 'León', cp: '24', tel: '987', lat: 42.5987, lon: -5.5671, zona: 'OESTE' },
  { ciudad: 'Badajoz', provincia: 'Badajoz', cp: '06', tel: '924', lat: 38.8794, lon: -6.9707, zona: 'OESTE' },
];

export const STREET_TYPES = ['C/', 'C/', 'C/', 'Avda.', 'Pza.', 'Pº', 'Ctra.', 'Travesía', 'Ronda', 'Camino'] as const;

export const STREET_NAMES = [
  'Mayor', 'del Sol', 'de la Fuente', 'San Roque', 'de los Almendros', 'del Olivar', 'Real',
  'de la Estación', 'Nueva', 'del Carmen', 'de las Huertas', 'Santa Ana', 'de la Paz',
  'del Molino', 'de Cervantes', 'de la Constitución', 'de los Tilos', 'del Pilar', 'Ancha',
  'de la Ermita', 'Virgen del Rocío', 'de Goya', 'de la Alameda', 'de Castilla',
] as const;

export const INDUSTRIAL_ESTATES = ['Los Llanos', 'El Prado', 'La Estrella', 'Las Cañadas', 'San Isidro'] as const;

export const FLOORS = ['', '', '', 'Bajo', '1º A', '1º Dcha.', '2º B', '2º Izda.', '3º C', '4º D', 'Local 2'] as const;

export const CONTACT_ROLES = ['Gerente', 'Administración', 'Compras', 'Encargado', 'Jefe de obra', 'Contabilidad', 'Técnico'] as const;

export const OFFICE_HOURS = ['L-V 7:30-15:30', 'Mañanas', '8:00-14:00', '9:00-13:00 / 16:00-19:00'] as const;

export const CUSTOMER_REMARKS = [
  'Cliente preferente',
  'Llamar antes de ir',
  'Cerrado en agosto',
  'No servir sin pedido firmado',
  'Pagar siempre al contado; tiene impagados',
  'Horario de 8:00 a 15:00',
  'Descuento especial pactado 2025',
  'Enviar facturas por email al departamento de administración',
  'Contactar con el encargado "Chema"',
  'Factura electrónica (FACe)',
] as const;

export const PAYMENT_TERMS = [
  'DOMICILIACIÓN SEPA', 'TRANSFERENCIA 30 DÍAS', 'RECIBO 30-60-90', 'PAGARÉ 90 DÍAS',
  'CONTADO', 'CONFIRMING 60', 'TRANSFERENCIA ANTICIPADA',
] as const;

/** Bank name, its four-digit entity code and its BIC. */
export const BANKS = [
  { name: 'CAIXABANK', code: '2100', bic: 'CAIXESBBXXX' },
  { name: 'BBVA', code: '0182', bic: 'BBVAESMMXXX' },
  { name: 'SANTANDER', code: '0049', bic: 'BSCHESMMXXX' },
  { name: 'SABADELL', code: '0081', bic: 'BSABESBBXXX' },
  { name: 'IBERCAJA', code: '2085', bic: 'CAZRES2ZXXX' },
  { name: 'KUTXABANK', code: '2095', bic: 'BASKES2BXXX' },
  { name: 'CAJAMAR', code: '3058', bic: 'CCRIES2AXXX' },
  { name: 'UNICAJA', code: '2103', bic: 'UCJAES2MXXX' },
] as const;

export const AGENTS = ['001 - OFICINA', '002 - J. MARTÍNEZ', '003 - A. LÓPEZ', '005 - M. GARCÍA', '007 - DELEGACIÓN SUR'] as const;

export const CARRIERS = ['RECOGE CLIENTE', 'MEDIOS PROPIOS', 'AGENCIA', 'MENSAJERÍA URGENTE'] as const;

export const ERP_USERS = ['ADMIN', 'ALOPEZ', 'JMARTINEZ', 'SYNC', 'CONTABILIDAD'] as const;

/** Staff of the (fictitious) company that owns the ERP: site managers, technicians. */
export const STAFF = [
  'Alberto Garrido Soler', 'Begoña Olmedo Rosales', 'Carlos Tejada Luján', 'Diego Barrios Sanz',
  'Eva Calleja Montero', 'Félix Robledo Peña', 'Gema Castaño Vidal', 'Héctor Quintana Muñoz',
  'Isabel Fajardo Zamora', 'Julián Hervás Cuesta',
] as const;

export const WORK_TYPES = [
  'Reforma integral de vivienda', 'Instalación de climatización', 'Rehabilitación de fachada',
  'Adecuación de local comercial', 'Instalación eléctrica de baja tensión', 'Renovación de bajantes',
  'Mantenimiento de comunidad', 'Instalación fotovoltaica de autoconsumo', 'Impermeabilización de cubierta',
] as const;

export const WORK_REMARKS = [
  'Acceso por la parte trasera',
  'Pendiente de licencia municipal',
  'Trabajar solo por las mañanas; hay vecinos',
  'Cliente exige parte diario',
  'Material en acopio en la nave',
] as const;

export const FAULTS = [
  'Fuga de agua en el baño', 'Caldera no enciende', 'Salta el diferencial', 'Atasco en la bajante',
  'Aire acondicionado no enfría', 'Luz de emergencia fundida', 'Cuadro eléctrico quemado',
  'Radiador frío', 'Persiana atascada', 'Humedad en el techo del garaje', 'Ascensor parado entre plantas',
  'Termo eléctrico pierde agua', 'Alarma de presión baja en la caldera', 'Enchufes de la cocina sin corriente',
] as const;

export const DIAGNOSES = [
  'Purgado del circuito', 'Sustitución de pieza averiada', 'Limpieza y ajuste', 'Cambio de junta',
  'Rearme y revisión de la instalación', 'Desatasco con máquina',
] as const;

export const SOLUTIONS = [
  'Reparado', 'Reparado provisionalmente; volver con repuesto', 'Se presupuesta sustitución',
  'Sin avería aparente',
] as const;

export const TECH_REMARKS = [
  'Equipo muy antiguo; recomendar cambio', 'Cliente no estaba', 'Falta repuesto del fabricante',
  'Volver la semana que viene',
] as const;

export const EQUIPMENT = ['caldera', 'split', 'termo', 'bomba de calor', 'grupo de presión', 'cuadro general'] as const;
