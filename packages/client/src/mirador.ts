/**
 * The client: one object per base URL and key (or sandbox), with one
 * resource per kind. It needs nothing but `fetch` (Node 18+, browsers, Deno).
 */
import type { Articulo, AvisoCorrectivo, Cliente, ItemsByKind, KindName, Obra } from './items.js';
import { ClientesResource, KindResource, ObrasResource } from './resource.js';
import { defaultSleep, Transport, type RetryInfo, type Sleep } from './transport.js';

/**
 * How to reach Mirador, and how patient to be.
 *
 * @example
 * ```ts
 * const options: MiradorOptions = { baseUrl: 'https://mirador.example.com', apiKey: process.env.MIRADOR_API_KEY };
 * ```
 */
export interface MiradorOptions {
  /** Where Mirador runs, such as `https://mirador.example.com` (no `/v1`). */
  baseUrl: string;
  /** A key from `mirador key create` or the panel. Required unless `sandbox` is true. */
  apiKey?: string;
  /** Read the sandbox (fixed fictitious data, no key) instead of real data. */
  sandbox?: boolean;
  /** Attempts per request, retries included (default 5, as the service asks). */
  maxAttempts?: number;
  /** Time allowed for one attempt, in ms (default 30 000). */
  timeoutMs?: number;
  /** Give up rather than wait longer than this between attempts, in ms (default 120 000). */
  maxRetryWaitMs?: number;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
  /** How to wait between attempts (default: setTimeout). Tests inject one to run instantly. */
  sleep?: Sleep;
  /** The clock, in epoch ms, for `Retry-After` dates (default: Date.now). */
  now?: () => number;
  /** Randomness for backoff jitter, in [0, 1) (default: Math.random). */
  random?: () => number;
  /** Told before each wait between attempts: for logs and progress displays. */
  onRetry?: (retry: RetryInfo) => void;
}

/**
 * A Mirador client.
 *
 * @example
 * ```ts
 * import { Mirador } from 'mirador/client';
 *
 * const client = new Mirador({ baseUrl: 'https://mirador.example.com', apiKey: process.env.MIRADOR_API_KEY });
 * const page = await client.clientes.list({ limit: 100, updatedSince: '2026-11-01' });
 * const one = await client.articulos.get('ELE000001');
 * for await (const obra of client.obras.all()) console.log(obra.id_erp, obra.nombre);
 *
 * const sandbox = new Mirador({ baseUrl: 'https://mirador.example.com', sandbox: true });
 * ```
 */
export class Mirador {
  /** Customers (`/v1/clientes`). */
  readonly clientes: ClientesResource<Cliente, Obra, AvisoCorrectivo>;
  /** Products (`/v1/articulos`). */
  readonly articulos: KindResource<Articulo>;
  /** Projects (`/v1/obras`). */
  readonly obras: ObrasResource<Obra, AvisoCorrectivo>;
  /** Corrective-maintenance notices (`/v1/avisos-correctivo`). */
  readonly avisosCorrectivo: KindResource<AvisoCorrectivo>;
  /** The base URL, without a trailing slash. */
  readonly baseUrl: string;
  readonly sandbox: boolean;
  private readonly resources: { [K in KindName]: KindResource<ItemsByKind[K]> };

  constructor(options: MiradorOptions) {
    const sandbox = options.sandbox === true;
    const apiKey = options.apiKey?.trim() || null;
    if (sandbox && apiKey !== null) throw new TypeError('Mirador: pass either apiKey or sandbox: true, not both.');
    if (!sandbox && apiKey === null) throw new TypeError('Mirador: an apiKey is required (or sandbox: true to read the sandbox).');
    let url: URL | null = null;
    try {
      url = new URL(options.baseUrl);
    } catch {
      // reported below, with the other ways a base URL can be wrong
    }
    // `localhost:3000` parses, as a URL of scheme "localhost:": only http(s) will do.
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new TypeError(`Mirador: baseUrl must be an absolute http(s) URL such as https://mirador.example.com; got "${options.baseUrl}".`);
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.sandbox = sandbox;

    const transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      sleep: options.sleep ?? defaultSleep,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
      maxAttempts: Math.max(1, options.maxAttempts ?? 5),
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetryWaitMs: options.maxRetryWaitMs ?? 120_000,
      onRetry: options.onRetry ?? null,
    });
    const path = (kind: KindName) => `${sandbox ? '/v1/sandbox/' : '/v1/'}${kind}`;
    const resource = <K extends KindName>(kind: K) => new KindResource<ItemsByKind[K]>(transport, path(kind));
    this.clientes = new ClientesResource<Cliente, Obra, AvisoCorrectivo>(transport, path('clientes'));
    this.obras = new ObrasResource<Obra, AvisoCorrectivo>(transport, path('obras'));
    this.resources = {
      clientes: this.clientes,
      articulos: resource('articulos'),
      obras: this.obras,
      'avisos-correctivo': resource('avisos-correctivo'),
    };
    this.articulos = this.resources.articulos;
    this.avisosCorrectivo = this.resources['avisos-correctivo'];
  }

  /**
   * The resource of a kind named as in paths, for code that takes the kind as data.
   *
   * @example
   * ```ts
   * const kind: KindName = 'avisos-correctivo';
   * const { total } = await client.forKind(kind).list({ limit: 1 });
   * ```
   */
  forKind<K extends KindName>(kind: K): KindResource<ItemsByKind[K]> {
    const resource = this.resources[kind];
    if (!resource) throw new TypeError(`Mirador: unknown kind "${String(kind)}".`);
    return resource;
  }
}
