/**
 * The delivery loop: runs in the background of `mirador serve` (never on a
 * request's path). It claims due deliveries from the store, sends each
 * (send-webhook.ts), records the attempt and, on failure, when to try again
 * (retry-schedule.ts). Claims are leases stored with the delivery, so a
 * process killed mid-attempt leaves nothing lost: its deliveries are taken
 * again when the lease ends, or at once by a process of the same host that
 * sees it is dead. Several instances on one PostgreSQL share the work, each
 * attempt made by one of them.
 *
 * A slow endpoint holds at most PER_ENDPOINT of the loop's CONCURRENCY slots,
 * each for at most the timeout: other endpoints' deliveries go on meanwhile.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { WebhookConfig } from '../config.js';
import type { ClaimedDelivery } from '../store/events.js';
import type { Store } from '../store/store.js';
import { WakeableSleep } from '../domain/wakeable-sleep.js';
import { nextAttemptAt } from './retry-schedule.js';
import { WebhookSender, type SendResult } from './send-webhook.js';

/** Attempts in flight in one process. */
const CONCURRENCY = 16;
/** …of which at most this many to one endpoint. */
const PER_ENDPOINT = 4;
const RELEASE_EVERY_MS = 10_000;

export interface DeliveryEvents {
  /** After each attempt (tests and the bench watch them; nothing here logs the secret). */
  attempted?(delivery: ClaimedDelivery, result: SendResult & { retryAt: number | null }): void;
  error?(err: unknown): void;
}

const HOST = hostname();

export function newDeliveryWorkerId(): string {
  return `${HOST}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Whether the process that holds a claim is dead: only knowable for a process of this host. */
export function deliveryWorkerIsGone(worker: string): boolean {
  const [host, pidText] = worker.split(':');
  const pid = Number(pidText);
  if (host !== HOST || !Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * How long a claim lasts: the attempt's whole timeout and a margin for
 * recording it. Only a process that stalled past it could see its delivery
 * attempted by another too (a duplicate, never a loss).
 */
export function leaseFor(timeoutMs: number): number {
  return 2 * timeoutMs + 5_000;
}

export class DeliveryLoop {
  readonly worker = newDeliveryWorkerId();
  private readonly sender: WebhookSender;
  private readonly inFlight = new Map<number, number>();
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new WakeableSleep();
  private lastRelease = 0;

  constructor(
    private readonly store: Store,
    private readonly config: WebhookConfig,
    private readonly options: { pollMs?: number; events?: DeliveryEvents; concurrency?: number; perEndpoint?: number } = {},
  ) {
    this.sender = new WebhookSender(config);
  }

  start() {
    this.loop ??= this.run();
  }

  /** Looks for due deliveries now rather than at the next poll (an import just ended). */
  wake() {
    this.pause.wake();
  }

  /** Stops claiming and waits for the attempts in flight (each bounded by the timeout). */
  async stop() {
    this.stopping = true;
    this.wake();
    await this.loop;
    await Promise.all(this.running);
    this.sender.close();
  }

  private get slots() {
    let used = 0;
    for (const n of this.inFlight.values()) used += n;
    return (this.options.concurrency ?? CONCURRENCY) - used;
  }

  private async run() {
    while (!this.stopping) {
      try {
        await this.claimRound();
      } catch (err) {
        // An outage: report it and wait for the next poll rather than spin.
        this.options.events?.error?.(err);
      }
      if (this.stopping) continue;
      await this.pause.sleep(this.options.pollMs ?? 1000);
    }
  }

  private async claimRound() {
    const now = Date.now();
    if (now - this.lastRelease >= RELEASE_EVERY_MS) {
      this.lastRelease = now;
      await this.store.releaseDeliveries(deliveryWorkerIsGone);
    }
    const cap = this.options.perEndpoint ?? PER_ENDPOINT;
    // Batches of at most `cap`, skipping the endpoints already at it: one endpoint with a backlog
    // never takes every slot (at most about twice its cap, when a batch lands on a busy one).
    for (;;) {
      const slots = this.slots;
      if (slots <= 0 || this.stopping) return;
      const full = [...this.inFlight].filter(([, n]) => n >= cap).map(([id]) => id);
      const claimed = await this.store.claimDeliveries(this.worker, Math.min(slots, cap), leaseFor(this.config.timeoutMs), full);
      for (const d of claimed) this.begin(d);
      if (claimed.length < Math.min(slots, cap)) return;
    }
  }

  private begin(d: ClaimedDelivery) {
    this.inFlight.set(d.endpointId, (this.inFlight.get(d.endpointId) ?? 0) + 1);
    const attempt = this.attempt(d).finally(() => {
      this.running.delete(attempt);
      const left = (this.inFlight.get(d.endpointId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(d.endpointId, left);
      else this.inFlight.delete(d.endpointId);
      // A slot is free: more may be due.
      this.wake();
    });
    this.running.add(attempt);
  }

  private async attempt(d: ClaimedDelivery) {
    try {
      const result = await attemptDelivery(this.store, this.sender, this.config, this.worker, d);
      this.options.events?.attempted?.(d, result);
    } catch (err) {
      // The attempt was made but not recorded (the store is down): its lease ends and it is made again.
      this.options.events?.error?.(err);
    }
  }
}

/** Sends a claimed delivery once and records the attempt; shared by the loop and `mirador webhook test`. */
export async function attemptDelivery(
  store: Store,
  sender: WebhookSender,
  config: WebhookConfig,
  worker: string,
  d: ClaimedDelivery,
): Promise<SendResult & { retryAt: number | null }> {
  const at = Date.now();
  const result = await sender.send({ url: d.url, secret: d.secret, eventId: d.eventId, body: d.body }, at);
  const retryAt = result.ok ? null : nextAttemptAt(d.attempts + 1, d.windowStartedAt, at + result.durationMs, config);
  await store.finishDelivery(d.id, worker, { ...result, at, retryAt });
  return { ...result, retryAt };
}
