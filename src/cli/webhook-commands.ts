/** `mirador webhook …` (contract §3, §7): endpoints of a company, and a test delivery made at once. */
import type { Command } from 'commander';
import type { WebhookEndpoint } from '../store/events.js';
import type { Store } from '../store/store.js';
import { attemptDelivery, leaseFor, newDeliveryWorkerId } from '../webhooks/delivery-loop.js';
import { checkEndpointUrl, InvalidEndpointUrlError } from '../webhooks/endpoint-url.js';
import { WebhookSender } from '../webhooks/send-webhook.js';
import { parseEventTypes, testEvent, UnknownEventTypeError } from '../webhooks/test-event.js';
import { webhookCreateAudit, webhookDeleteAudit, webhookUpdateAudit } from '../webhooks/webhook-audit.js';
import { generateWebhookSecret } from '../webhooks/webhook-secret.js';
import { CliError, cliWho, emit, iso, requireCompany, table, withStore, type CliContext, type JsonOption } from './cli-context.js';

function endpointJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    events: e.eventTypes.length === 0 ? ['*'] : e.eventTypes,
    enabled: e.disabledAt === null,
    disabled_reason: e.disabledReason,
    created_at: iso(e.createdAt),
    disabled_at: iso(e.disabledAt),
    last_success_at: iso(e.lastSuccessAt),
  };
}

function parseId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw new CliError(`"${raw}" is not a webhook endpoint id: see "mirador webhook list <slug>".`);
  return Number(raw);
}

async function requireEndpoint(store: Store, raw: string): Promise<WebhookEndpoint> {
  const endpoint = await store.webhookEndpointById(parseId(raw));
  if (!endpoint) throw new CliError(`There is no webhook endpoint ${raw}. See "mirador webhook list <slug>".`);
  return endpoint;
}

export function registerWebhookCommands(program: Command, ctx: CliContext) {
  const webhook = program.command('webhook').description('manage webhook endpoints (signed POSTs when an import ends)');

  webhook
    .command('create')
    .description('create a webhook endpoint for a company; its signing secret is printed once')
    .argument('<slug>', 'company')
    .argument('<url>', 'where events are POSTed (https://)')
    .option('--events <types>', 'comma-separated event types (default: every type): import.published, import.held, import.failed')
    .option('--json', 'print JSON: {"id", "url", "events", "secret"}')
    .action(async (slug: string, rawUrl: string, opts: JsonOption & { events?: string }) => {
      let url: string;
      let eventTypes;
      try {
        url = checkEndpointUrl(rawUrl, ctx.config.webhooks);
        eventTypes = parseEventTypes(opts.events);
      } catch (err) {
        if (err instanceof InvalidEndpointUrlError || err instanceof UnknownEventTypeError) throw new CliError(err.message);
        throw err;
      }
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const secret = generateWebhookSecret();
        const e = await store.createWebhookEndpoint({ companyId: company.id, url, eventTypes, secret }, webhookCreateAudit(cliWho(), company.id, url, eventTypes));
        emit(ctx, opts, { ...endpointJson(e), secret }, () =>
          [
            `Created webhook endpoint ${e.id} for ${company.slug}: ${e.url}`,
            `Events: ${e.eventTypes.length === 0 ? 'every type' : e.eventTypes.join(', ')}`,
            '',
            `  Signing secret: ${secret}`,
            '',
            'Store it now: it cannot be shown again. Check deliveries with verifyWebhook (docs/integrating.md).',
          ].join('\n'),
        );
      });
    });

  webhook
    .command('list')
    .description("list a company's webhook endpoints")
    .argument('<slug>', 'company')
    .option('--json', 'print JSON')
    .action(async (slug: string, opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const company = await requireCompany(store, slug);
        const rows = (await store.listWebhookEndpoints(company.id)).map(endpointJson);
        emit(ctx, opts, rows, () =>
          rows.length === 0
            ? `No webhook endpoints for ${company.slug}. Create one with "mirador webhook create ${company.slug} <url>".`
            : table([
                ['ID', 'URL', 'EVENTS', 'STATUS', 'LAST DELIVERED'],
                ...rows.map((r) => [
                  String(r.id),
                  r.url,
                  r.events.join(','),
                  r.enabled ? 'enabled' : `disabled (${r.disabled_reason})`,
                  r.last_success_at ?? 'never',
                ]),
              ]),
        );
      });
    });

  webhook
    .command('delete')
    .description('delete a webhook endpoint, with its pending deliveries and its log')
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const e = await requireEndpoint(store, id);
        await store.deleteWebhookEndpoint(e.id, webhookDeleteAudit(cliWho(), e));
        emit(ctx, opts, { id: e.id, deleted: true }, () => `Deleted webhook endpoint ${e.id} (${e.url}).`);
      });
    });

  for (const enabled of [true, false]) {
    webhook
      .command(enabled ? 'enable' : 'disable')
      .description(enabled ? 'enable an endpoint again: its pending deliveries are retried now' : 'stop delivering to an endpoint')
      .argument('<id>', 'endpoint id')
      .option('--json', 'print JSON')
      .action(async (id: string, opts: JsonOption) => {
        await withStore(ctx, async (store) => {
          const e = await requireEndpoint(store, id);
          const after = (await store.setWebhookEndpointEnabled(e.id, enabled, webhookUpdateAudit(cliWho(), e, enabled)))!;
          emit(ctx, opts, endpointJson(after), () => `Webhook endpoint ${e.id} is ${enabled ? 'enabled' : 'disabled'}.`);
        });
      });
  }

  webhook
    .command('test')
    .description('send a test event (type webhook.test) to an endpoint now, and print the answer')
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: JsonOption) => {
      await withStore(ctx, async (store) => {
        const e = await requireEndpoint(store, id);
        // Claimed by this command at creation: no running server attempts it at the same time.
        const worker = newDeliveryWorkerId();
        const config = ctx.config.webhooks;
        const event = testEvent();
        const delivery = await store.queueDelivery(e.id, event, { worker, leaseMs: leaseFor(config.timeoutMs) });
        const sender = new WebhookSender(config);
        try {
          const result = await attemptDelivery(store, sender, config, worker, {
            id: delivery.id,
            endpointId: e.id,
            url: e.url,
            secret: e.secret,
            eventId: event.publicId,
            eventType: event.type,
            body: event.body,
            attempts: 0,
            windowStartedAt: delivery.createdAt.getTime(),
          });
          const json = { endpoint: e.id, delivery: delivery.id, event: delivery.eventId, delivered: result.ok, status: result.statusCode, duration_ms: result.durationMs, error: result.error };
          emit(ctx, opts, json, () =>
            result.ok
              ? `Delivered test event ${delivery.eventId} to ${e.url}: ${result.statusCode} in ${result.durationMs} ms.`
              : `The test event ${delivery.eventId} was not delivered to ${e.url}: ${result.error} (${result.durationMs} ms).` +
                (result.retryAt ? ` It is retried by the server at ${new Date(result.retryAt).toISOString()}.` : ''),
          );
          if (!result.ok) process.exitCode = 1;
        } finally {
          sender.close();
        }
      });
    });
}
