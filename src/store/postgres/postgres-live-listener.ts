/**
 * Tells a serving process when any process publishes a snapshot: one
 * dedicated connection LISTENs on `mirador_live`, and `publishSnapshot`
 * NOTIFYs in its transaction, which PostgreSQL delivers at commit. While that
 * connection is down, publications could be missed, so `listening` is false
 * and the store looks every pointer up again; each (re)connection counts as
 * a change, since anything may have been published meanwhile.
 */
import pg from 'pg';

export const LIVE_CHANNEL = 'mirador_live';

const CONNECT_TIMEOUT_MS = 2000;
const KEEPALIVE_DELAY_MS = 10_000;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

export class LiveListener {
  private client: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    /** Called on every notification and whenever listening starts or stops. */
    private readonly onChange: () => void,
  ) {}

  /** True while notifications are certain to arrive. */
  get isListening(): boolean {
    return this.listening;
  }

  start(): void {
    void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      application_name: 'mirador-listen',
    });
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.onChange();
      client.end().catch(() => {});
      this.retry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', () => this.onChange());
    try {
      await client.connect();
      await client.query(`LISTEN ${LIVE_CHANNEL}`);
    } catch {
      lost();
      return;
    }
    if (this.client !== client) return;
    // Publications made before LISTEN took effect were not notified: forget first, then trust.
    this.onChange();
    this.listening = true;
    this.retryMs = FIRST_RETRY_MS;
  }

  private retry(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }
}
