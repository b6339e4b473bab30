import type { BillingType, OsImageKey, Region, Size } from '@svc/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { createPlainVmMutation, osImagesQuery } from '../../api/queries/plain-vms.js';
import { vaultQuery } from '../../api/queries/vault.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { SubmitButton } from '../../components/SubmitButton.js';
import { accountPath, useCurrentAccount } from '../../modules/account-context.js';
import { BillingTypePicker } from '../../modules/BillingTypePicker.js';
import { keepInitialPassword } from '../../modules/InitialPassword.js';
import { RegionField, SizeField } from '../../modules/RegionSizeFields.js';
import { useTitle } from '../../modules/use-title.js';
import { useUnverifiedReason } from '../../modules/use-unverified.js';
import { VaultKeyPicker } from './VaultKeyPicker.js';

export function CreatePlainVmPage() {
  const { account } = useCurrentAccount();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const keys = useQuery(vaultQuery(account.id));
  const [name, setName] = useState('');
  const [tier, setTier] = useState<Size>('small');
  const [region, setRegion] = useState<Region>('eu');
  const images = useQuery(osImagesQuery());
  // Only the images the service has: a VM of another would end in `image_unavailable`.
  const offered = images.data?.filter((i) => i.available) ?? [];
  const [chosenImage, setOsImageKey] = useState<OsImageKey>();
  const osImageKey = chosenImage ?? offered[0]?.key;
  const [billingType, setBillingType] = useState<BillingType>('metered');
  // The account's only Vault key is chosen until the user says otherwise.
  const [chosenKeys, setVaultEntryIds] = useState<string[]>();
  const onlyKey = keys.data?.length === 1 ? keys.data[0]?.id : undefined;
  const vaultEntryIds = chosenKeys ?? (onlyKey ? [onlyKey] : []);
  const [passwordEnabled, setPasswordEnabled] = useState(false);
  const create = useMutation(createPlainVmMutation(qc));
  useTitle('New Plain VM', account.name);
  const unverified = useUnverifiedReason();

  const image = offered.find((i) => i.key === osImageKey);
  return (
    <section className="narrow-section">
      <h1>New Plain VM</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (!osImageKey) return;
          create.mutate(
            {
              name,
              tier,
              region,
              osImageKey,
              billingType,
              access: { passwordEnabled, vaultEntryIds },
              accountId: account.id,
            },
            {
              // Straight to the new VM's page, as for an Agent; its one-time password shows there.
              onSuccess: ({ initialPassword, ...vm }) => {
                if (initialPassword) keepInitialPassword(vm.id, initialPassword);
                navigate(accountPath(account.slug, 'plain-vms', vm.id));
              },
            },
          );
        }}
      >
        <Field label="Name" hint="Its hostname." errors={issuesAt(create.error, 'name')}>
          {(control) => (
            <input {...control} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <RegionField
          value={region}
          onChange={setRegion}
          errors={issuesAt(create.error, 'region')}
        />
        <SizeField
          label="Tier"
          region={region}
          value={tier}
          onChange={setTier}
          errors={issuesAt(create.error, 'tier')}
        />
        <Field
          label="OS image"
          hint={
            image
              ? `You log in as ${image.defaultUser}.`
              : images.data &&
                'This service has no OS image yet: its operator adds them with: sudo npm run admin -- images build'
          }
          errors={issuesAt(create.error, 'osImageKey')}
        >
          {(control) => (
            <select
              {...control}
              value={osImageKey ?? ''}
              disabled={offered.length === 0}
              onChange={(e) => setOsImageKey(e.target.value as OsImageKey)}
            >
              {offered.map((i) => (
                <option key={i.key} value={i.key}>
                  {i.displayName} (user {i.defaultUser})
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorMessage error={images.error} title="The OS images could not be loaded." />
        <VaultKeyPicker
          keys={keys}
          selected={vaultEntryIds}
          onChange={setVaultEntryIds}
          errors={issuesAt(create.error, 'access')}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={passwordEnabled}
            onChange={(e) => setPasswordEnabled(e.target.checked)}
          />
          Also set a one-time password (shown once, after creation)
        </label>
        <BillingTypePicker
          account={account}
          product="plain_vm"
          size={tier}
          region={region}
          value={billingType}
          onChange={setBillingType}
        />
        <ErrorMessage error={create.error} />
        <SubmitButton
          label="Create Plain VM"
          busyLabel="Creating…"
          pending={create.isPending || !images.data}
          unavailable={
            unverified ?? (offered.length === 0 && 'There is no OS image to start from yet.')
          }
        />
      </form>
    </section>
  );
}
