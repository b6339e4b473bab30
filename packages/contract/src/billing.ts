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

export const billingEndpoints = [listSlots, deleteSlot] as const;
