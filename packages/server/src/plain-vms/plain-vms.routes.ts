import * as api from '@svc/contract';
import type { AppContext } from '../context.js';
import type { Router } from '../http/router.js';
import { PLAIN_VM } from '../lifecycle/machine-kinds.js';
import { logChange } from '../lifecycle/machine-log.js';
import { listOsImages } from './os-images.js';

export function mountPlainVmsRoutes(router: Router, ctx: AppContext) {
  const { plainVms } = ctx;
  const user = (c: { var: { user: { id: string } } }) => c.var.user.id;
  const log = ctx.log.root.child({ subsystem: 'plain-vms' });

  // Before `/api/plain-vms/{id}`, which would take `images` for an id.
  router.mount(api.listOsImages, async () => listOsImages(ctx.compute, ctx.log.http));
  router.mount(api.createPlainVm, async ({ body }, c) => {
    // Creating a machine waits for a verified e-mail where the operator requires one.
    ctx.accounts.requireVerifiedEmail(c.var.user);
    return plainVms.create(user(c), body);
  });
  router.mount(api.listPlainVms, async ({ query }, c) => plainVms.list(user(c), query.accountId));
  router.mount(api.getPlainVm, async ({ params }, c) => plainVms.get(user(c), params.id));
  router.mount(api.startPlainVm, async ({ params }, c) =>
    plainVms.act(user(c), params.id, 'start'),
  );
  router.mount(api.stopPlainVm, async ({ params }, c) => plainVms.act(user(c), params.id, 'stop'));
  router.mount(api.restartPlainVm, async ({ params }, c) =>
    plainVms.act(user(c), params.id, 'restart'),
  );
  router.mount(api.deletePlainVm, async ({ params }, c) =>
    plainVms.act(user(c), params.id, 'destroy'),
  );
  router.mount(api.updatePlainVm, async ({ params, body }, c) =>
    plainVms.update(user(c), params.id, body),
  );
  router.mount(api.resizePlainVm, async ({ params, body }, c) =>
    logChange(
      log,
      PLAIN_VM,
      { id: params.id, move: 'resize' },
      () => plainVms.resize(user(c), params.id, body.tier),
      (vm) => ({ tier: vm.tier }),
    ),
  );
  const { snapshots } = ctx;
  router.mount(api.plainVmSnapshots.list, async ({ params }, c) =>
    snapshots.list(PLAIN_VM, user(c), params.id),
  );
  router.mount(api.plainVmSnapshots.create, async ({ params, body }, c) =>
    snapshots.create(PLAIN_VM, user(c), params.id, body),
  );
  router.mount(api.plainVmSnapshots.restore, async ({ params }, c) =>
    snapshots.restore(PLAIN_VM, user(c), params.id, params.snapshotId),
  );
  router.mount(api.plainVmSnapshots.remove, async ({ params }, c) => {
    await snapshots.remove(PLAIN_VM, user(c), params.id, params.snapshotId);
    return undefined;
  });
  router.mount(api.setPlainVmBilling, async ({ params, body }, c) =>
    logChange(
      log,
      PLAIN_VM,
      { id: params.id, move: 'billing' },
      () => plainVms.setBilling(user(c), params.id, body.billingType),
      (result) => ({ billingType: result.billingType, addedNewSlot: result.addedNewSlot }),
    ),
  );
  router.mount(api.transferPlainVm, async ({ params, body }, c) =>
    logChange(
      log,
      PLAIN_VM,
      { id: params.id, move: 'transfer' },
      () => plainVms.transfer(user(c), params.id, body.targetAccountId),
      (vm) => ({ accountId: vm.accountId, driver: vm.provider }),
    ),
  );
  router.mount(api.getPlainVmFirewall, async ({ params }, c) =>
    plainVms.getFirewall(user(c), params.id),
  );
  router.mount(api.putPlainVmFirewall, async ({ params, body }, c) =>
    plainVms.putFirewall(user(c), params.id, body),
  );
}
