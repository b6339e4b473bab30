import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { issuesAt } from '../../api/client.js';
import { meQuery, updateMeMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';

export function NameForm() {
  const qc = useQueryClient();
  const me = useQuery(meQuery());
  const update = useMutation(updateMeMutation(qc));
  const [name, setName] = useState<string>();
  const shown = name ?? me.data?.user.name ?? '';
  return (
    <section>
      <h2>Name</h2>
      <form
        noValidate
        className="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate({ name: shown }, { onSuccess: () => setName(undefined) });
        }}
      >
        <Field label="Your name" errors={issuesAt(update.error, 'name')}>
          {(control) => (
            <input {...control} value={shown} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <button type="submit" disabled={update.isPending || !me.data}>
          {update.isPending ? 'Saving…' : 'Save name'}
        </button>
      </form>
      {update.isSuccess && <p role="status">Saved.</p>}
      <ErrorMessage error={update.error} />
    </section>
  );
}
