import { z } from 'zod';
import { Region, Size } from './agents.js';
import { Id, Timestamp } from './common.js';
import { defineEndpoint } from './endpoint.js';

export const Slot = z.object({
  id: Id,
  product: z.enum(['agent', 'plain_vm']),
  size: Size,
  region: Region,
  inUse: z.boolean(),
  createdAt: Timestamp,
});
export type Slot = z.infer<typeof Slot>;

export const listSlots = defineEndpoint({
  id: 'listSlots',
  method: 'GET',
  path: '/api/accounts/{id}/slots',
  auth: 'session',
  tag: 'billing',
  summary: "The subscription's slots, in use or free (any member).",
  params: z.object({ id: Id }),
  response: { status: 200, body: z.array(Slot) },
  errors: [],
});

export const deleteSlot = defineEndpoint({
  id: 'deleteSlot',
  method: 'DELETE',
  path: '/api/accounts/{id}/slots/{slotId}',
  auth: 'session',
  tag: 'billing',
  summary: 'Remove a free slot from the subscription (owners and admins); one in use answers 409.',
  params: z.object({ id: Id, slotId: Id }),
  response: { status: 204 },
  errors: ['invalid_state'],
});

/**
 * One machine's usage in the period: how long it was charged under each billing type (every
 * state but `destroying` and `error`).
 */
export const UsageLine = z.object({
  resourceKind: z.enum(['agent', 'plain_vm']),
  resourceId: Id,
  /** Null once the machine is destroyed or moved to another account; its usage here stays. */
  name: z.string().nullable(),
  size: Size,
  region: Region,
  meteredSeconds: z.number().int().nonnegative(),
  subscriptionSeconds: z.number().int().nonnegative(),
  /** Still counting: the machine is on this account and charged now. */
  open: z.boolean(),
});
export type UsageLine = z.infer<typeof UsageLine>;

export const Usage = z.object({
  /** The start of the calendar month (UTC) the usage is counted from. */
  periodStart: Timestamp,
  asOf: Timestamp,
  resources: z.array(UsageLine),
});
export type Usage = z.infer<typeof Usage>;

export const getUsage = defineEndpoint({
  id: 'getUsage',
  method: 'GET',
  path: '/api/accounts/{id}/usage',
  auth: 'session',
  tag: 'billing',
  summary: "This calendar month's usage so far, by machine (any member).",
  params: z.object({ id: Id }),
  response: { status: 200, body: Usage },
  errors: [],
});

export const billingEndpoints = [listSlots, deleteSlot, getUsage] as const;
