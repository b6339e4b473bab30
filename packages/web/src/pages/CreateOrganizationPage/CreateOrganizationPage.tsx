import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { createOrgMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { accountPath } from '../../modules/account-context.js';
import { useTitle } from '../../modules/use-title.js';

/** A slug suggestion from the name; the user may change it (it is immutable afterwards). */
const slugFrom = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);

export function CreateOrganizationPage() {
  useTitle('New organization');
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState<string | null>(null);
  const effectiveSlug = slug ?? slugFrom(name);
  const create = useMutation({
    ...createOrgMutation(qc),
    onSuccess: async (org) => {
      await qc.invalidateQueries({ queryKey: ['me'] });
      navigate(accountPath(org.slug, 'billing'));
    },
  });
  return (
    <div className="narrow">
      <h1>New organization</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ name, slug: effectiveSlug });
        }}
      >
        <Field label="Name" errors={issuesAt(create.error, 'name')}>
          {(control) => (
            <input {...control} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <Field
          label="Slug"
          hint="Part of its public links; it cannot change later."
          errors={issuesAt(create.error, 'slug')}
        >
          {(control) => (
            <input {...control} value={effectiveSlug} onChange={(e) => setSlug(e.target.value)} />
          )}
        </Field>
        <ErrorMessage error={create.error} />
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create organization'}
        </button>
      </form>
    </div>
  );
}
