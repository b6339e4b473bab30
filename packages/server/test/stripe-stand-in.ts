import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

type Obj = Record<string, any>;

/**
 * Stripe's API as far as the payment processor uses it (customers, prices, subscriptions and
 * their items, invoices and invoice items), in memory, over HTTP, for the official SDK to talk
 * to (`STRIPE_API_URL`). It keeps idempotency keys as Stripe does (a repeat gets the first
 * answer), pays or declines a finalized invoice (`declinePayments`), and makes the events Stripe
 * would send, signed with the webhook secret for the test to deliver. `down`: every connection is
 * dropped, as if Stripe could not be reached.
 */
export class StripeStandIn {
  readonly customers = new Map<string, Obj>();
  readonly prices = new Map<string, Obj>();
  readonly subscriptions = new Map<string, Obj>();
  readonly invoices = new Map<string, Obj>();
  readonly invoiceItems = new Map<string, Obj>();
  /** Every request: method, path and the parsed parameters. */
  readonly requests: { method: string; path: string; params: Obj }[] = [];
  /** Events made so far, oldest first (not yet delivered: the test delivers them). */
  readonly events: Stripe.Event[] = [];
  down = false;
  declinePayments = false;
  /**
   * Requests (`POST subscriptions`) that are carried out but whose answer is lost: the
   * connection drops, the SDK's retry with the same idempotency key too.
   */
  readonly loseAnswersTo = new Set<string>();
  #server: Server | undefined;
  #ids = 0;
  #idempotent = new Map<string, { status: number; body: Obj }>();
  #sdk = new Stripe('sk_test_stand_in');

  constructor(readonly webhookSecret: string) {}

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      if (this.down) {
        req.socket.destroy();
        return;
      }
      void this.#handle(req, res);
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }

  /** Signs `event` as Stripe would: the raw body and its `Stripe-Signature` header. */
  sign(event: Stripe.Event, timestampMs = Date.now()): { body: string; signature: string } {
    const body = JSON.stringify(event);
    const signature = this.#sdk.webhooks.generateTestHeaderString({
      payload: body,
      secret: this.webhookSecret,
      timestamp: Math.floor(timestampMs / 1000),
    });
    return { body, signature };
  }

  /** A new event about `object`, kept in `events`; `createdMs` defaults to now. */
  event(type: string, object: Obj, createdMs = Date.now()): Stripe.Event {
    const event = {
      id: this.#id('evt'),
      object: 'event',
      type,
      created: Math.floor(createdMs / 1000),
      livemode: false,
      api_version: Stripe.API_VERSION,
      data: { object: structuredClone(object) },
    } as unknown as Stripe.Event;
    this.events.push(event);
    return event;
  }

  /** Pays an open invoice now (a customer fixed their card): `invoice.paid`. */
  pay(invoiceId: string): Stripe.Event {
    const invoice = this.invoices.get(invoiceId) as Obj;
    invoice.status = 'paid';
    return this.event('invoice.paid', this.#invoiceView(invoice));
  }

  #id(prefix: string) {
    this.#ids += 1;
    return `${prefix}_standin${this.#ids}`;
  }

  async #handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = req.method ?? 'GET';
    const params = parseForm(
      method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString(),
    );
    this.requests.push({ method, path: url.pathname, params });
    const send = (status: number, body: Obj) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': this.#id('req') });
      res.end(JSON.stringify(body));
    };
    const key = req.headers['idempotency-key'];
    const remembered = typeof key === 'string' ? this.#idempotent.get(key) : undefined;
    if (remembered && this.loseAnswersTo.has(`${method} ${url.pathname.split('/')[2]}`)) {
      req.socket.destroy();
      return;
    }
    if (remembered) return send(remembered.status, remembered.body);
    let answer: { status: number; body: Obj };
    try {
      answer = { status: 200, body: this.#route(method, url.pathname, params) };
    } catch (error) {
      const status = (error as { status?: number }).status ?? 400;
      answer = {
        status,
        body: { error: { type: 'invalid_request_error', message: (error as Error).message } },
      };
    }
    if (typeof key === 'string' && method === 'POST') this.#idempotent.set(key, answer);
    if (this.loseAnswersTo.has(`${method} ${url.pathname.split('/')[2]}`)) {
      req.socket.destroy();
      return;
    }
    send(answer.status, answer.body);
  }

  #route(method: string, path: string, p: Obj): Obj {
    const [, , resource, id, action] = path.split('/');
    const route = `${method} ${resource}${id ? '/:id' : ''}${action ? `/${action}` : ''}`;
    switch (route) {
      case 'GET customers/:id': {
        if (id !== 'search') return this.#get(this.customers, id);
        const accountId = /metadata\['accountId'\]:'([^']+)'/.exec(p.query)?.[1];
        return list(
          [...this.customers.values()].filter((c) => c.metadata.accountId === accountId),
          'search_result',
        );
      }
      case 'POST customers':
        return this.#put(this.customers, {
          id: this.#id('cus'),
          object: 'customer',
          name: p.name,
          metadata: p.metadata ?? {},
        });
      case 'GET prices': {
        const keys = toArray(p.lookup_keys);
        // As Stripe: at most ten lookup keys a request.
        if (keys.length > 10) throw new Error('lookup_keys: at most 10 keys');
        return list([...this.prices.values()].filter((price) => keys.includes(price.lookup_key)));
      }
      case 'POST prices': {
        if (p.transfer_lookup_key === 'true') {
          for (const price of this.prices.values()) {
            if (price.lookup_key === p.lookup_key) price.lookup_key = null;
          }
        }
        return this.#put(this.prices, {
          id: this.#id('price'),
          object: 'price',
          active: true,
          currency: p.currency,
          unit_amount: Number(p.unit_amount),
          recurring: { interval: p.recurring.interval },
          lookup_key: p.lookup_key,
          product: this.#id('prod'),
        });
      }
      case 'GET subscriptions':
        return list(
          [...this.subscriptions.values()]
            .filter((s) => s.customer === p.customer)
            .map((s) => this.#subscriptionView(s)),
        );
      case 'GET subscriptions/:id':
        return this.#subscriptionView(this.#get(this.subscriptions, id));
      case 'POST subscriptions': {
        this.#get(this.customers, p.customer);
        const sub = this.#put(this.subscriptions, {
          id: this.#id('sub'),
          object: 'subscription',
          customer: p.customer,
          status: 'active',
          billing_cycle_anchor: Number(p.billing_cycle_anchor),
          metadata: p.metadata ?? {},
          items: [] as Obj[],
        });
        for (const item of toArray(p.items)) this.#addItem(sub, item);
        return this.#subscriptionView(sub);
      }
      case 'POST subscriptions/:id': {
        const sub = this.#get(this.subscriptions, id);
        for (const change of toArray(p.items)) {
          if (!change.id) this.#addItem(sub, change);
          else if (change.deleted === 'true') {
            sub.items = sub.items.filter((item: Obj) => item.id !== change.id);
          } else {
            const item = sub.items.find((i: Obj) => i.id === change.id);
            if (!item) throw Object.assign(new Error('No such item'), { status: 404 });
            item.quantity = Number(change.quantity);
          }
        }
        if (sub.items.length === 0) throw new Error('A subscription needs at least one item');
        return this.#subscriptionView(sub);
      }
      case 'DELETE subscriptions/:id': {
        const sub = this.#get(this.subscriptions, id);
        sub.status = 'canceled';
        this.event('customer.subscription.deleted', this.#subscriptionView(sub));
        return this.#subscriptionView(sub);
      }
      case 'GET subscription_items':
        return list(this.#get(this.subscriptions, p.subscription).items);
      case 'GET invoices':
        return list(
          [...this.invoices.values()]
            .filter((i) => i.customer === p.customer)
            .map((i) => this.#invoiceView(i)),
        );
      case 'POST invoices':
        this.#get(this.customers, p.customer);
        return this.#invoiceView(
          this.#put(this.invoices, {
            id: this.#id('in'),
            object: 'invoice',
            customer: p.customer,
            subscription: p.subscription ?? null,
            currency: p.currency,
            status: 'draft',
            auto_advance: p.auto_advance === 'true',
            metadata: p.metadata ?? {},
          }),
        );
      case 'POST invoices/:id/finalize': {
        const invoice = this.#get(this.invoices, id);
        if (invoice.status !== 'draft') throw new Error('This invoice is already finalized');
        invoice.status = this.declinePayments ? 'open' : 'paid';
        this.event(
          this.declinePayments ? 'invoice.payment_failed' : 'invoice.paid',
          this.#invoiceView(invoice),
        );
        return this.#invoiceView(invoice);
      }
      case 'GET invoiceitems':
        return list([...this.invoiceItems.values()].filter((i) => i.invoice === p.invoice));
      case 'POST invoiceitems': {
        const invoice = this.#get(this.invoices, p.invoice);
        if (invoice.status !== 'draft') throw new Error('The invoice is not a draft');
        return this.#put(this.invoiceItems, {
          id: this.#id('ii'),
          object: 'invoiceitem',
          customer: p.customer,
          invoice: p.invoice,
          amount: Number(p.amount),
          currency: p.currency,
          description: p.description,
          metadata: p.metadata ?? {},
        });
      }
      default:
        throw Object.assign(new Error(`Unrecognized request URL (${method}: ${path})`), {
          status: 404,
        });
    }
  }

  #get(map: Map<string, Obj>, id: string | undefined): Obj {
    const found = id === undefined ? undefined : map.get(id);
    if (!found) throw Object.assign(new Error(`No such object: '${id}'`), { status: 404 });
    return found;
  }

  #put(map: Map<string, Obj>, object: Obj): Obj {
    map.set(object.id, object);
    return object;
  }

  #addItem(sub: Obj, item: Obj) {
    const price = this.#get(this.prices, item.price);
    if (sub.items.some((i: Obj) => i.price.id === price.id)) {
      throw new Error('Cannot add multiple subscription items with the same price');
    }
    sub.items.push({
      id: this.#id('si'),
      object: 'subscription_item',
      price,
      quantity: Number(item.quantity ?? 1),
    });
  }

  #subscriptionView(sub: Obj): Obj {
    return { ...sub, items: list(sub.items) };
  }

  #invoiceView(invoice: Obj): Obj {
    const lines = [...this.invoiceItems.values()]
      .filter((item) => item.invoice === invoice.id)
      .map((item) => ({
        id: `il_${item.id}`,
        object: 'line_item',
        amount: item.amount,
        metadata: item.metadata,
      }));
    const { subscription, ...rest } = invoice;
    return {
      ...rest,
      parent: subscription
        ? { type: 'subscription_details', subscription_details: { subscription } }
        : null,
      total: lines.reduce((sum, line) => sum + line.amount, 0),
      lines: list(lines),
    };
  }
}

const list = (data: Obj[], object = 'list') => ({ object, data, has_more: false, url: '/v1' });

const toArray = (value: unknown): any[] =>
  value === undefined ? [] : Array.isArray(value) ? value : Object.values(value as Obj);

/** Stripe's form encoding (`items[0][price]=…`, `metadata[accountId]=…`) as nested objects. */
function parseForm(text: string): Obj {
  const root: Obj = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const keys = name.split(/\[|\]\[|\]/).filter((key) => key !== '');
    let node = root;
    for (const [index, key] of keys.entries()) {
      if (index === keys.length - 1) node[key] = value;
      else node = node[key] ??= {};
    }
  }
  return root;
}
