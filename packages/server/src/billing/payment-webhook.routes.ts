import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { Router } from '../http/router.js';
import type { ProcessorEvent } from './payment-processor.js';

/**
 * The payment processor's webhook. Its signature covers the raw bytes, so the body is read here
 * as bytes (the endpoint declares no body schema, so the router leaves it unread). Each delivery
 * is counted by the service's event type (its `kind`: a bounded set, unlike the processor's
 * names) and what became of it.
 */
export function mountPaymentWebhookRoutes(router: Router, ctx: AppContext) {
  router.mount(api.stripeWebhook, async (_input, c) => {
    const { paymentProcessor: processor, metrics } = ctx;
    if (!processor.readWebhook) throw new AppError('not_found');
    const body = new Uint8Array(await c.req.arrayBuffer());
    let event: ProcessorEvent;
    try {
      event = processor.readWebhook(body, c.req.header('stripe-signature'));
    } catch (error) {
      metrics.webhookEvent('unknown', 'rejected');
      throw error;
    }
    try {
      await ctx.subscriptions.applyEvent(event);
    } catch (error) {
      metrics.webhookEvent(event.kind, 'failed');
      throw error;
    }
    metrics.webhookEvent(event.kind, event.kind === 'ignored' ? 'ignored' : 'applied');
    return { received: true as const };
  });
}
