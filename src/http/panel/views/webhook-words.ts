/**
 * The webhook pages' words, Spanish first and English. A table of its own
 * (i18n.ts holds the shared words and the navigation): one object per
 * language with the same keys, so a missing translation is a type error.
 */
import type { Lang } from '../i18n.js';

const es = {
  title: 'Webhooks',
  intro:
    'Mirador avisa a tus sistemas cuando termina una importación: envía un POST firmado a cada URL que registres aquí, y lo reintenta durante 3 días si no responde con un 2xx.',
  createTitle: 'Añadir un endpoint',
  urlHint: 'Solo https://. La URL debe ser pública: no se envía a direcciones locales ni privadas.',
  urlHintHttp: 'https://, o http:// (permitido en este servidor). La URL debe ser pública salvo que el servidor lo permita.',
  events: 'Eventos',
  eventsHint: 'Si no marcas ninguno, recibe todos.',
  describe: {
    'import.published': 'datos nuevos publicados',
    'import.held': 'importación pendiente de confirmar',
    'import.failed': 'importación fallida',
  },
  createButton: 'Añadir endpoint',
  createdTitle: 'Endpoint {id} creado',
  secretOnce: 'Guarda ahora el secreto de firma: no se volverá a mostrar. Con él compruebas que cada envío viene de Mirador.',
  secretLabel: 'Secreto de firma',
  openEndpoint: 'Ver el endpoint y enviar un evento de prueba',
  listTitle: 'Endpoints',
  noEndpoints: 'Todavía no hay endpoints.',
  allEvents: 'Todos',
  enabled: 'Activo',
  disabledManual: 'Desactivado',
  disabledFailing: 'Desactivado: fallaba',
  failingExplain: 'Todos los intentos fallaron durante el periodo de reintentos. Actívalo de nuevo cuando el receptor funcione.',
  lastDelivered: 'Última entrega',
  verifyTitle: 'Comprobar la firma',
  verifyText:
    'Cada envío lleva las cabeceras Mirador-Event-Id y Mirador-Signature (t=<segundos>,v1=<HMAC-SHA256 en hexadecimal>). El cliente TypeScript la comprueba con verifyWebhook; la guía de integración tiene un receptor de ejemplo.',
  endpointTitle: 'Webhook {id}',
  pending: 'Entregas pendientes',
  sendTest: 'Enviar un evento de prueba',
  disable: 'Desactivar',
  enable: 'Activar',
  delete: 'Eliminar',
  back: 'Volver a los webhooks',
  attemptsTitle: 'Intentos',
  attemptsIntro: 'Cada intento de entrega, el más reciente primero.',
  noAttempts: 'Todavía no hay intentos.',
  time: 'Hora',
  event: 'Evento',
  httpStatus: 'Respuesta',
  noAnswer: 'sin respuesta',
  error: 'Error',
  delivery: 'Entrega',
  deliveryStatus: { pending: 'Pendiente', delivered: 'Entregada', failed: 'Fallida' },
  sendAgain: 'Enviar de nuevo',
  testQueued: 'Evento de prueba en cola: aparecerá en los intentos en unos segundos.',
  resendQueued: 'Entrega en cola de nuevo.',
  disabledNotice: 'Endpoint desactivado: no recibirá envíos hasta que lo actives.',
  enabledNotice: 'Endpoint activado: sus entregas pendientes se envían ya.',
  deletedNotice: 'Endpoint {id} eliminado.',
  deleteTitle: 'Eliminar el webhook {id}',
  deleteWarning: 'Se eliminan el endpoint, sus entregas pendientes y su historial de intentos. No se puede deshacer.',
  deleteConfirm: 'Eliminar el endpoint',
  notAdded: 'No se ha añadido el endpoint: {reason}',
};

type Words = typeof es;

const en: Words = {
  title: 'Webhooks',
  intro:
    'Mirador tells your systems when an import ends: it sends a signed POST to each URL you register here, and retries it for 3 days until it is answered with a 2xx.',
  createTitle: 'Add an endpoint',
  urlHint: 'https:// only. The URL must be public: nothing is sent to local or private addresses.',
  urlHintHttp: 'https://, or http:// (allowed on this server). The URL must be public unless the server allows otherwise.',
  events: 'Events',
  eventsHint: 'Tick none to receive every type.',
  describe: {
    'import.published': 'new data published',
    'import.held': 'import awaiting confirmation',
    'import.failed': 'import failed',
  },
  createButton: 'Add endpoint',
  createdTitle: 'Endpoint {id} created',
  secretOnce: 'Store the signing secret now: it will not be shown again. It proves that each delivery comes from Mirador.',
  secretLabel: 'Signing secret',
  openEndpoint: 'Open the endpoint and send a test event',
  listTitle: 'Endpoints',
  noEndpoints: 'There are no endpoints yet.',
  allEvents: 'All',
  enabled: 'Enabled',
  disabledManual: 'Disabled',
  disabledFailing: 'Disabled: failing',
  failingExplain: 'Every attempt failed for the whole retry period. Enable it again once the receiver works.',
  lastDelivered: 'Last delivered',
  verifyTitle: 'Checking the signature',
  verifyText:
    'Each delivery carries the headers Mirador-Event-Id and Mirador-Signature (t=<seconds>,v1=<hex HMAC-SHA256>). The TypeScript client checks it with verifyWebhook; the integration guide has an example receiver.',
  endpointTitle: 'Webhook {id}',
  pending: 'Pending deliveries',
  sendTest: 'Send a test event',
  disable: 'Disable',
  enable: 'Enable',
  delete: 'Delete',
  back: 'Back to webhooks',
  attemptsTitle: 'Attempts',
  attemptsIntro: 'Every delivery attempt, newest first.',
  noAttempts: 'No attempts yet.',
  time: 'Time',
  event: 'Event',
  httpStatus: 'Answer',
  noAnswer: 'no answer',
  error: 'Error',
  delivery: 'Delivery',
  deliveryStatus: { pending: 'Pending', delivered: 'Delivered', failed: 'Failed' },
  sendAgain: 'Send again',
  testQueued: 'Test event queued: it shows among the attempts within seconds.',
  resendQueued: 'Delivery queued again.',
  disabledNotice: 'Endpoint disabled: it receives nothing until you enable it.',
  enabledNotice: 'Endpoint enabled: its pending deliveries go out now.',
  deletedNotice: 'Endpoint {id} deleted.',
  deleteTitle: 'Delete webhook {id}',
  deleteWarning: 'The endpoint, its pending deliveries and its attempts log are deleted. This cannot be undone.',
  deleteConfirm: 'Delete the endpoint',
  notAdded: 'The endpoint was not added: {reason}',
};

export type WebhookWords = Words;

export function webhookWords(lang: Lang): WebhookWords {
  return lang === 'es' ? es : en;
}
