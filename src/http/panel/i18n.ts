/**
 * The panel's words, in Spanish (the default: the panel's users are Spanish
 * companies) and English. One table, each entry `[es, en]`, so a missing
 * translation is a type error rather than a blank on the page. `{name}` is
 * replaced by a parameter; the result is plain text, escaped by the templates.
 */
import type { Kind } from '../../domain/kinds.js';

export const LANGS = ['es', 'en'] as const;
export type Lang = (typeof LANGS)[number];

export function isLang(value: unknown): value is Lang {
  return value === 'es' || value === 'en';
}

const MESSAGES = {
  // Layout
  skipToContent: ['Saltar al contenido', 'Skip to content'],
  mainNav: ['Navegación principal', 'Main navigation'],
  navOverview: ['Resumen', 'Overview'],
  navKeys: ['Claves API', 'API keys'],
  navTokens: ['Tokens de subida', 'Upload tokens'],
  navHelp: ['Integración', 'Integration'],
  navWebhooks: ['Webhooks', 'Webhooks'],
  signOut: ['Cerrar sesión', 'Sign out'],
  signedInAs: ['{email} · {company}', '{email} · {company}'],
  switchLanguage: ['Idioma', 'Language'],
  otherLanguage: ['English', 'Español'],
  panelTitle: ['Panel de Mirador', 'Mirador panel'],

  // Kinds
  kind_clientes: ['Clientes', 'Customers'],
  kind_articulos: ['Artículos', 'Products'],
  kind_obras: ['Obras', 'Projects'],
  'kind_avisos-correctivo': ['Avisos correctivos', 'Corrective notices'],

  // Import statuses
  status_receiving: ['Recibiendo', 'Receiving'],
  status_queued: ['En cola', 'Queued'],
  status_running: ['Importando', 'Importing'],
  status_succeeded: ['Correcta', 'Succeeded'],
  status_failed: ['Fallida', 'Failed'],
  status_awaiting_confirmation: ['Pendiente de confirmar', 'Awaiting confirmation'],
  status_rejected: ['Rechazada', 'Rejected'],

  // Sign-in
  signInTitle: ['Iniciar sesión', 'Sign in'],
  signInIntro: ['Panel de administración de los datos de tu empresa.', "Administration panel for your company's data."],
  email: ['Correo electrónico', 'Email'],
  password: ['Contraseña', 'Password'],
  signInButton: ['Entrar', 'Sign in'],
  signInFailed: ['El correo o la contraseña no son correctos.', 'The email or the password is wrong.'],
  signInThrottled: [
    'Demasiados intentos fallidos con este correo. Vuelve a intentarlo dentro de {minutes} min.',
    'Too many failed attempts for this email. Try again in {minutes} min.',
  ],
  signedOut: ['Has cerrado la sesión.', 'You have signed out.'],
  sessionExpired: ['Tu sesión ha caducado. Vuelve a entrar.', 'Your session has expired. Please sign in again.'],

  // Common
  never: ['Nunca', 'Never'],
  none: ['Ninguna', 'None'],
  cancel: ['Cancelar', 'Cancel'],
  copy: ['Copiar', 'Copy'],
  copied: ['Copiado', 'Copied'],
  copyFailed: ['No se pudo copiar: selecciónalo y cópialo a mano.', 'Could not copy: select it and copy it by hand.'],
  date: ['Fecha', 'Date'],
  file: ['Archivo', 'File'],
  source: ['Origen', 'Source'],
  status: ['Estado', 'Status'],
  rows: ['Filas', 'Rows'],
  records: ['Registros', 'Records'],
  label: ['Etiqueta', 'Label'],
  prefix: ['Prefijo', 'Prefix'],
  created: ['Creación', 'Created'],
  lastUsed: ['Último uso', 'Last used'],
  active: ['Activa', 'Active'],
  activeToken: ['Activo', 'Active'],
  revoked: ['Revocada', 'Revoked'],
  revokedToken: ['Revocado', 'Revoked'],
  refresh: ['Actualizar la página', 'Refresh the page'],
  revoke: ['Revocar', 'Revoke'],
  actions: ['Acciones', 'Actions'],
  scrollTable: ['Tabla desplazable: {name}', 'Scrollable table: {name}'],

  // Overview
  overviewTitle: ['Resumen', 'Overview'],
  overviewIntro: [
    'Lo que sirve ahora la API de {company}, por tipo de dato.',
    'What the API serves for {company} now, per kind of data.',
  ],
  recordCount: ['{count} registros', '{count} records'],
  noRecords: ['Sin datos publicados', 'No data published'],
  lastImport: ['Última importación', 'Last import'],
  noImportsYet: ['Ninguna importación todavía', 'No imports yet'],
  uploadAndHistory: ['Subir CSV e historial', 'Upload CSV and history'],
  columnMapping: ['Mapeo de columnas', 'Column mapping'],
  liveNow: ['En la API ahora', 'Live in the API'],
  liveImport: ['Importación {id}', 'Import {id}'],
  livePublished: ['Publicado', 'Published'],
  nothingLive: ['Nada todavía', 'Nothing yet'],
  lastAttempt: ['Último intento', 'Last attempt'],
  nextUploadFirst: ['Subir el primer CSV', 'Upload the first CSV'],
  nextUploadNew: ['Subir una exportación nueva', 'Upload a new export'],
  nextUploadFixed: ['Subir un archivo corregido', 'Upload a corrected file'],
  nextDecide: ['Decidir sobre la importación retenida', 'Decide on the held import'],
  nextFollow: ['Ver el progreso', 'Follow its progress'],
  lastAttemptFailedNote: ['El último archivo no se aplicó: se siguen sirviendo los datos anteriores.', 'The last file was not applied: the previous data is still served.'],
  lastAttemptHeldNote: ['La última importación espera una decisión antes de aplicarse.', 'The last import waits for a decision before it is applied.'],
  checklistTitle: ['Primeros pasos', 'Getting started'],
  checklistIntro: ['Tres pasos para la primera integración. Esta lista desaparece cuando están hechos.', 'Three steps to a first integration. This list goes away once they are done.'],
  checklistUpload: ['Sube la exportación de clientes del ERP', "Upload the ERP's customers export"],
  checklistKey: ['Crea una clave API para tu integración', 'Create an API key for your integration'],
  checklistSandbox: ['Prueba la API en el sandbox, sin clave', 'Try the API in the sandbox, no key needed'],
  checklistDone: ['hecho', 'done'],
  checklistPending: ['pendiente', 'to do'],

  // Kind page: upload, history, preview
  uploadTitle: ['Subir un CSV', 'Upload a CSV'],
  uploadLabel: ['Archivo CSV exportado del ERP', 'CSV file exported from the ERP'],
  uploadHint: [
    'Sustituye todos los datos de {kind} cuando termina la importación; hasta entonces se siguen sirviendo los actuales. Máximo {size} (descomprimido).',
    'Replaces all {kind} data once the import ends; until then the current data is served. At most {size} (decompressed).',
  ],
  uploadButton: ['Subir e importar', 'Upload and import'],
  dropTitle: ['Arrastra aquí el archivo o pulsa para elegirlo', 'Drop the file here, or click to choose it'],
  dropHint: ['CSV exportado del ERP, o comprimido (.csv.gz)', 'A CSV exported from the ERP, or gzipped (.csv.gz)'],
  dropChosen: ['Elegido: {name} ({size})', 'Chosen: {name} ({size})'],
  progressSteps: ['Pasos de la importación', 'Import steps'],
  stepUpload: ['Subida', 'Upload'],
  stepRead: ['Lectura', 'Read'],
  stepPublish: ['Publicación', 'Publish'],
  stepReadCount: ['{rows} filas', '{rows} rows'],
  stepPublished: ['{inserted} nuevos, {updated} modificados, {deleted} eliminados', '{inserted} new, {updated} changed, {deleted} removed'],
  stepFailed: ['No se aplicó', 'Not applied'],
  seeReport: ['Ver el informe', 'See the report'],
  failedNothingApplied: ['No se aplicó nada: se siguen sirviendo los datos anteriores.', 'Nothing was applied: the previous data is still served.'],
  rejectedNothingApplied: ['Rechazada: no se aplicó ningún cambio y no se eliminó ningún registro.', 'Rejected: no change was applied and no record was removed.'],
  stepHeld: ['Retenida: decide en su página', 'Held: decide on its page'],
  uploadChooseFile: ['Elige un archivo CSV.', 'Choose a CSV file.'],
  importProgress: ['Importación', 'Import'],
  uploading: ['Subiendo… {percent} %', 'Uploading… {percent}%'],
  uploaded: ['Archivo recibido.', 'File received.'],
  uploadFailed: ['La subida falló: {reason}', 'The upload failed: {reason}'],
  uploadTooLarge: ['El archivo supera el máximo de {size}.', 'The file is larger than the maximum of {size}.'],
  importWaiting: ['En cola, esperando al importador…', 'Queued, waiting for the importer…'],
  importRunning: ['Importando… {rows} filas leídas ({percent} %)', 'Importing… {rows} rows read ({percent}%)'],
  importDone: ['Importación terminada.', 'Import finished.'],
  historyTitle: ['Historial de importaciones', 'Import history'],
  historyEmpty: ['Todavía no se ha subido ningún archivo de {kind}.', 'No {kind} file has been uploaded yet.'],
  importNumber: ['Nº', 'No.'],
  previewTitle: ['Vista previa', 'Preview'],
  previewIntro: ['Los primeros {shown} de {count} registros publicados.', 'The first {shown} of {count} published records.'],

  // Import page and report
  importTitle: ['Importación {id}: {kind}', 'Import {id}: {kind}'],
  backToKind: ['Volver a {kind}', 'Back to {kind}'],
  queuedAt: ['Subida', 'Uploaded'],
  startedAt: ['Empezó', 'Started'],
  finishedAt: ['Terminó', 'Finished'],
  size: ['Tamaño', 'Size'],
  reportTitle: ['Informe', 'Report'],
  rowsRead: ['Filas leídas', 'Rows read'],
  inserted: ['Nuevos', 'Inserted'],
  updated: ['Modificados', 'Updated'],
  unchanged: ['Sin cambios', 'Unchanged'],
  deleted: ['Eliminados', 'Deleted'],
  warnings: ['Advertencias', 'Warnings'],
  duration: ['Duración', 'Duration'],
  encoding: ['Codificación', 'Encoding'],
  delimiter: ['Separador', 'Delimiter'],
  columnsCount: ['Columnas', 'Columns'],
  unchangedSnapshot: [
    'El archivo no cambia nada: se mantienen los datos publicados, sin reescribirlos (las ETag siguen valiendo).',
    'The file changes nothing: the published data was kept as it was, not rewritten (ETags stay valid).',
  ],
  warningsShown: ['Se muestran las primeras {shown} de {count} advertencias.', 'The first {shown} of {count} warnings are shown.'],
  warningLine: ['Línea {line}: «{value}» en la columna «{column}» no es {expected}; {field} queda vacío.', 'Line {line}: "{value}" in column "{column}" is not {expected}; {field} is left empty.'],
  expectNumber: ['un número (como 1234,56)', 'a number (such as 1234.56)'],
  expectDate: ['una fecha (como 31/12/2024)', 'a date (such as 2024-12-31)'],
  failedBecause: ['La importación falló; los datos publicados no han cambiado.', 'The import failed; the published data has not changed.'],
  failureLine: ['Línea {line}.', 'Line {line}.'],
  failureDetail: ['Detalle técnico (en inglés)', 'Details'],
  noReport: ['Todavía no hay informe.', 'There is no report yet.'],
  importError_empty_file: ['El archivo no tiene línea de cabecera.', 'The file has no header line.'],
  importError_undecodable: ['El archivo contiene bytes que no se pueden leer como texto.', 'The file holds bytes that cannot be read as text.'],
  importError_mixed_encodings: ['El archivo mezcla codificaciones: tiene texto UTF-8 y bytes que no lo son.', 'The file mixes encodings: it holds UTF-8 text and bytes that are not UTF-8.'],
  importError_undefined_byte: ['El archivo tiene un byte que no es ningún carácter en Windows-1252.', 'The file holds a byte that is no character in Windows-1252.'],
  importError_bad_header: ['La cabecera tiene un nombre de columna vacío o repetido.', 'The header has an empty or repeated column name.'],
  importError_bad_quote: ['Hay una celda entre comillas mal cerrada.', 'A quoted cell is not closed properly.'],
  importError_ragged_row: ['Una fila tiene más o menos celdas que la cabecera.', 'A row has more or fewer cells than the header.'],
  importError_cell_too_large: ['Una celda es demasiado larga.', 'A cell is too long.'],
  importError_too_many_columns: ['El archivo tiene demasiadas columnas.', 'The file has too many columns.'],
  importError_no_id_column: ['Ninguna columna puede servir de id_erp.', 'No column can serve as id_erp.'],
  importError_empty_id: ['Una fila tiene el id_erp vacío.', 'A row has an empty id_erp.'],
  importError_wrong_kind: ['Parece la exportación de otro tipo de dato.', 'It looks like the export of another kind of data.'],
  importError_bad_mapping: ['El mapeo de columnas guardado nombra una columna que no está en el archivo.', 'The saved column mapping names a column that is not in the file.'],
  importError_duplicate_id: ['Hay valores de id_erp repetidos.', 'Some id_erp values are repeated.'],
  importError_internal_error: ['Error interno del importador.', 'An internal error of the importer.'],
  reapplyThisFile: ['Importar de nuevo este archivo', 'Import this file again'],
  fileRemoved: [
    'El archivo de esta importación ya no se guarda: se borró el {date}, {days} días después de terminar. Para importarlo de nuevo, súbelo otra vez.',
    'The file of this import is no longer kept: it was removed on {date}, {days} days after the import ended. To import it again, upload it again.',
  ],
  heldTitle: ['Pendiente de confirmación', 'Awaiting confirmation'],
  heldExplain: [
    'Esta importación eliminaría {count} de {of} registros. Puede ser una exportación incompleta, así que se siguen sirviendo los datos anteriores hasta que decidas.',
    'This import would remove {count} of {of} records. It may be a partial export, so the previous data keeps serving until you decide.',
  ],
  heldExamples: ['Por ejemplo: {ids}.', 'For example: {ids}.'],
  heldDrift: [
    'La cabecera del archivo comparte solo {shared} de sus {columns} columnas con la de los datos que se sirven ({live}). Puede ser la exportación de otro tipo de dato o un cambio en el ERP, así que se siguen sirviendo los datos anteriores hasta que decidas.',
    "The file's header shares only {shared} of its {columns} column names with the live data's ({live}). It may be another kind's export or a change in the ERP, so the previous data keeps serving until you decide.",
  ],
  heldAppeared: ['Columnas nuevas: {names}.', 'Columns that appeared: {names}.'],
  heldDisappeared: ['Columnas que desaparecen: {names}.', 'Columns that disappeared: {names}.'],
  heldOtherKind: [
    'Parece una exportación de {other}, no de {kind}: el mapeo de {other} encuentra {otherFed} de sus campos y el de {kind} solo {kindFed}. Hasta que decidas no se publica nada.',
    'It looks like an export of {other}, not {kind}: the mapping of {other} finds {otherFed} of its fields, that of {kind} only {kindFed}. Nothing is published until you decide.',
  ],
  namesMore: ['{names} y {more} más', '{names} and {more} more'],
  heldConfirm: ['Aplicar este archivo', 'Apply this file'],
  heldApplyRemove: ['Aplicar y eliminar {count} registros', 'Apply and remove {count} records'],
  heldApplyRemoveOne: ['Aplicar y eliminar 1 registro', 'Apply and remove 1 record'],
  heldReject: ['Rechazar', 'Reject'],
  heldLiveTitle: ['Lo que se sirve ahora', 'Served now'],
  heldLiveKeeps: ['Se sigue sirviendo tal cual si rechazas el archivo.', 'Keeps serving as it is if you reject the file.'],
  heldNothingLive: ['Ningún registro', 'No records'],
  heldNothingLiveHint: ['Aún no se ha publicado ningún dato de {kind}.', 'No {kind} data has been published yet.'],
  heldNewTitle: ['Si aplicas este archivo', 'If you apply this file'],
  heldRecords: ['{count} registros', '{count} records'],
  heldWouldInsert: ['Nuevos', 'New'],
  heldWouldUpdate: ['Modificados', 'Changed'],
  heldWouldKeep: ['Sin cambios', 'Unchanged'],
  heldWouldRemove: ['Se eliminarían', 'Would be removed'],
  heldRemovedTitle: ['Registros que se eliminarían', 'Records that would be removed'],
  heldRemovedIntro: [
    'Están en los datos que se sirven y faltan en el archivo. Los {shown} primeros de {count}, por id_erp:',
    'They are in the live data and missing from the file. The first {shown} of {count}, by id_erp:',
  ],
  heldRemovedAll: [
    'Están en los datos que se sirven y faltan en el archivo:',
    'They are in the live data and missing from the file:',
  ],
  heldName: ['Nombre', 'Name'],
  heldRejectHint: [
    'Rechazar descarta este archivo: no se elimina ningún registro y se siguen sirviendo los datos actuales. Aplicar publica el archivo ahora.',
    'Rejecting discards this file: no record is removed and the current data keeps serving. Applying publishes the file now.',
  ],
  heldConfirmed: ['Importación confirmada: los datos nuevos ya se sirven.', 'Import confirmed: the new data is live.'],
  heldRejected: ['Importación rechazada: se mantienen los datos anteriores.', 'Import rejected: the previous data stays.'],
  reapplyQueued: ['El archivo se ha puesto de nuevo en cola como importación {id}.', 'The file was queued again as import {id}.'],

  // Mapping page
  mappingTitle: ['Mapeo de columnas: {kind}', 'Column mapping: {kind}'],
  mappingIntro: [
    'Cada campo destacado de la API se toma de una columna del CSV. Por defecto se reconocen los nombres habituales de los ERP; aquí puedes elegir otra columna. Los cambios se aplican desde la próxima importación.',
    "Each highlighted field of the API is taken from a column of the CSV. Common ERP names are recognised by default; here you can choose another column. Changes apply from the next import.",
  ],
  mappingColumnsFrom: ['Columnas del último archivo: {file} (importación {id}), {count} columnas.', 'Columns of the last file: {file} (import {id}), {count} columns.'],
  mappingNoFile: [
    'Todavía no se ha subido ningún archivo de {kind}: sus columnas aparecerán aquí tras la primera subida.',
    'No {kind} file has been uploaded yet: its columns will show here after the first upload.',
  ],
  field: ['Campo', 'Field'],
  column: ['Columna', 'Column'],
  feedsNow: ['En el último archivo', 'In the last file'],
  recognisedByDefault: ['Nombres reconocidos por defecto', 'Names recognised by default'],
  automatic: ['Automático', 'Automatic'],
  automaticWith: ['Automático ({column})', 'Automatic ({column})'],
  automaticNone: ['Automático (ninguna columna)', 'Automatic (no column)'],
  notInFile: ['{column} (no está en el último archivo)', '{column} (not in the last file)'],
  saveMapping: ['Guardar mapeo', 'Save mapping'],
  mappingSaved: ['Mapeo guardado. Se aplica desde la próxima importación.', 'Mapping saved. It applies from the next import.'],
  reapplyTitle: ['Aplicar ya el mapeo', 'Apply the mapping now'],
  reapplyIntro: ['Importa de nuevo el último archivo ({file}, importación {id}) con el mapeo guardado.', 'Imports the last file ({file}, import {id}) again with the saved mapping.'],
  reapplyButton: ['Importar de nuevo el último archivo', 'Import the last file again'],
  unknownColumn: ['La columna elegida no está en el último archivo.', 'The chosen column is not in the last file.'],

  // Keys and tokens
  keyCreatedTitle: ['Clave {prefix} creada', 'Key {prefix} created'],
  tokenCreatedTitle: ['Token {prefix} creado', 'Token {prefix} created'],
  secretShownOnce: ['Se muestra solo esta vez', 'Shown this once only'],
  keySaveIt: [
    'Cópiala ahora y guárdala donde tu integración la lea (un gestor de secretos, una variable de entorno). Mirador solo guarda su huella: no podrá volver a mostrarla.',
    'Copy it now and keep it where your integration reads it (a secrets manager, an environment variable). Mirador keeps only its hash: it cannot show it again.',
  ],
  tokenSaveIt: [
    'Cópialo ahora y guárdalo en la exportación programada del ERP. Mirador solo guarda su huella: no podrá volver a mostrarlo.',
    "Copy it now and keep it in the ERP's scheduled export. Mirador keeps only its hash: it cannot show it again.",
  ],
  newKey: ['Clave API', 'API key'],
  newToken: ['Token de subida', 'Upload token'],
  secretSavedKey: ['Ya la he guardado', 'I have saved it'],
  secretSavedToken: ['Ya lo he guardado', 'I have saved it'],
  secretGoneTitle: ['Ya se mostró', 'Already shown'],
  secretGone: [
    'Su valor se mostró una vez y no se puede volver a mostrar. Si no lo guardaste, revócalo y crea otro.',
    'Its value was shown once and cannot be shown again. If you did not save it, revoke it and create another.',
  ],
  backToKeys: ['Volver a las claves', 'Back to the keys'],
  backToTokens: ['Volver a los tokens', 'Back to the tokens'],
  keysTitle: ['Claves API', 'API keys'],
  keysIntro: [
    'Una clave lee los datos de {company} en /v1. Se muestra completa una sola vez, al crearla; aquí solo se ve su prefijo.',
    'A key reads the data of {company} at /v1. It is shown in full once, when created; here only its prefix is shown.',
  ],
  tokensTitle: ['Tokens de subida', 'Upload tokens'],
  tokensIntro: [
    'Un token de subida solo sirve para enviar archivos CSV, por ejemplo desde una exportación programada del ERP. No puede leer /v1.',
    "An upload token can only send CSV files, for example from the ERP's scheduled export. It cannot read /v1.",
  ],
  createKey: ['Crear una clave', 'Create a key'],
  createToken: ['Crear un token', 'Create a token'],
  labelHint: ['Para qué sirve, p. ej. «Panel de BI».', 'What it is for, e.g. “BI dashboard”.'],
  createKeyButton: ['Crear clave', 'Create key'],
  createTokenButton: ['Crear token', 'Create token'],
  keyCreated: ['Clave {prefix} creada. Cópiala ahora: no se volverá a mostrar.', 'Key {prefix} created. Copy it now: it will not be shown again.'],
  tokenCreated: ['Token {prefix} creado. Cópialo ahora: no se volverá a mostrar.', 'Token {prefix} created. Copy it now: it will not be shown again.'],
  newSecret: ['Valor completo', 'Full value'],
  keysList: ['Claves', 'Keys'],
  tokensList: ['Tokens', 'Tokens'],
  noKeys: ['Todavía no hay claves.', 'There are no keys yet.'],
  noTokens: ['Todavía no hay tokens.', 'There are no tokens yet.'],
  revokeKeyTitle: ['¿Revocar la clave {prefix}?', 'Revoke key {prefix}?'],
  revokeTokenTitle: ['¿Revocar el token {prefix}?', 'Revoke token {prefix}?'],
  revokeWarning: [
    'Quien la use recibirá un error 401 desde este momento. No se puede deshacer.',
    'Whoever uses it gets a 401 error from now on. This cannot be undone.',
  ],
  revokeConfirm: ['Sí, revocar', 'Yes, revoke'],
  keyRevokedNotice: ['Clave {prefix} revocada.', 'Key {prefix} revoked.'],
  tokenRevokedNotice: ['Token {prefix} revocado.', 'Token {prefix} revoked.'],
  tokenUsage: ['Uso desde la exportación del ERP', "Use from the ERP's export"],

  // Help
  helpTitle: ['Integración', 'Integration'],
  helpIntro: [
    'Todo lo necesario para leer los datos desde otra aplicación.',
    'Everything needed to read the data from another application.',
  ],
  baseUrl: ['URL base', 'Base URL'],
  baseUrlLabel: ['Todas las rutas de la API empiezan por', 'Every API path starts with'],
  exampleSandbox: ['Probar sin clave, con datos ficticios', 'Try it without a key, on fictitious data'],
  sandboxTitle: ['Sandbox (sin clave, datos ficticios)', 'Sandbox (no key, fictitious data)'],
  sandboxIntro: [
    'Mismo formato que los datos reales. Para pasar a los reales, quita /sandbox de la ruta y añade la clave.',
    'The same format as the real data. To switch to the real data, remove /sandbox from the path and add the key.',
  ],
  examplesTitle: ['Ejemplos con curl', 'curl examples'],
  exampleList: ['Primera página de clientes', 'First page of customers'],
  exampleSince: ['Solo lo que ha cambiado desde una fecha', 'Only what changed since a date'],
  exampleDetail: ['Un registro por su id_erp', 'One record by its id_erp'],
  exampleUpload: ['Subir un CSV con un token de subida', 'Upload a CSV with an upload token'],
  examplePlaceholder: ['Sustituye <clave> por una clave API y <token> por un token de subida.', 'Replace <key> with an API key and <token> with an upload token.'],

  // Key expiry (issue 24)
  expires: ['Caduca', 'Expires'],
  expiresIn: ['Caducidad', 'Expiry'],
  expiresInHint: [
    'Pasado este plazo la clave deja de funcionar (401). Para cambiarla sin cortes: crea la nueva, cámbiala en la aplicación y revoca la antigua.',
    'After this the key stops working (401). To rotate without downtime: create the new key, switch the application to it, then revoke the old one.',
  ],
  expiresNever: ['Nunca', 'Never'],
  expiresDays: ['{days} días', '{days} days'],
  expired: ['Caducada', 'Expired'],
  expiresInvalid: ['La caducidad debe ser un número de días u horas, p. ej. 90d o 12h.', 'The expiry must be a number of days or hours, e.g. 90d or 12h.'],
  keyCreatedUntil: ['Válida hasta', 'Valid until'],

  // Audit trail (issue 24)
  navAudit: ['Actividad', 'Activity'],
  auditTitle: ['Registro de actividad', 'Activity log'],
  auditIntro: [
    'Quién hizo qué en {company}: accesos al panel, claves, tokens, subidas, decisiones sobre importaciones retenidas y cambios de mapeo. Lo más reciente primero; se conserva {days} días.',
    'Who did what in {company}: panel sign-ins, keys, tokens, uploads, decisions on held imports and mapping changes. Newest first; kept for {days} days.',
  ],
  auditFilter: ['Acción', 'Action'],
  auditAllActions: ['Todas', 'All'],
  auditApply: ['Filtrar', 'Filter'],
  auditWhen: ['Cuándo', 'When'],
  auditWho: ['Quién', 'Who'],
  auditWhat: ['Acción', 'Action'],
  auditDetails: ['Detalles', 'Details'],
  auditEmpty: ['No hay actividad registrada con este filtro.', 'No activity recorded with this filter.'],
  auditOlder: ['Más antiguas', 'Older'],
  auditNewest: ['Volver a las más recientes', 'Back to the newest'],
  auditPages: ['Páginas del registro', 'Log pages'],
  auditBadAction: ['Esa acción no existe.', 'There is no such action.'],
  'action_session.sign_in': ['Inicio de sesión', 'Sign-in'],
  'action_session.sign_in_failed': ['Inicio de sesión fallido', 'Failed sign-in'],
  'action_session.sign_out': ['Cierre de sesión', 'Sign-out'],
  'action_key.create': ['Clave creada', 'Key created'],
  'action_key.revoke': ['Clave revocada', 'Key revoked'],
  'action_token.create': ['Token creado', 'Token created'],
  'action_token.revoke': ['Token revocado', 'Token revoked'],
  'action_import.upload': ['Archivo subido', 'File uploaded'],
  'action_import.confirm': ['Importación confirmada', 'Import confirmed'],
  'action_import.reject': ['Importación rechazada', 'Import rejected'],
  'action_mapping.change': ['Mapeo cambiado', 'Mapping changed'],
  'action_user.create': ['Administrador creado', 'Administrator created'],
  'action_guard.change': ['Protección de borrado cambiada', 'Deletion guard changed'],
  'action_webhook.create': ['Webhook creado', 'Webhook created'],
  'action_webhook.update': ['Webhook cambiado', 'Webhook changed'],
  'action_webhook.delete': ['Webhook eliminado', 'Webhook deleted'],
  group_session: ['Sesiones', 'Sessions'],
  group_key: ['Claves API', 'API keys'],
  group_token: ['Tokens de subida', 'Upload tokens'],
  group_import: ['Importaciones', 'Imports'],
  group_mapping: ['Mapeo', 'Mapping'],
  group_user: ['Administradores', 'Administrators'],
  group_guard: ['Protección de borrado', 'Deletion guard'],
  group_webhook: ['Webhooks', 'Webhooks'],

  // Errors
  notFoundTitle: ['No encontrado', 'Not found'],
  notFoundText: ['No hay nada en esta dirección.', 'There is nothing at this address.'],
  csrfTitle: ['El formulario ha caducado', 'The form has expired'],
  csrfText: ['Recarga la página y vuelve a intentarlo.', 'Reload the page and try again.'],
  errorTitle: ['Algo ha fallado', 'Something went wrong'],
  errorText: ['Inténtalo de nuevo dentro de unos segundos.', 'Try again in a few seconds.'],
  tooManyTitle: ['Demasiados intentos', 'Too many attempts'],
  badRequestTitle: ['Petición no válida', 'Invalid request'],
  backToOverview: ['Volver al resumen', 'Back to the overview'],
} as const satisfies Record<string, readonly [string, string]>;

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
