import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { Router } from '../http/router.js';

/**
 * The payment processor's webhook. Its signature covers the raw bytes, so the body is read here
 * as bytes (the endpoint declares no body schema, so the router leaves it unread).
 */
export function mountPaymentWebhookRoutes(router: Router, ctx: AppContext) {
  router.mount(api.stripeWebhook, async (_input, c) => {
    const { paymentProcessor: processor } = ctx;
    if (!processor.readWebhook) throw new AppError('not_found');
    const body = new Uint8Array(await c.req.arrayBuffer());
    const event = processor.readWebhook(body, c.req.header('stripe-signature'));
    await ctx.subscriptions.applyEvent(event);
    return { received: true as const };
  });
}
