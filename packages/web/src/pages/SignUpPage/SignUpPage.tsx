import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { signUpMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { accountPath } from '../../modules/account-context.js';
import { returnPath } from '../../modules/return-to.js';
import { useTitle } from '../../modules/use-title.js';

export function SignUpPage() {
  const qc = useQueryClient();
  const navigate = useNavigate();
  useTitle('Create your account');
  // `?next=`, from the sign-in page: the page that asked for an account.
  const { search } = useLocation();
  const [form, setForm] = useState({ name: '', email: '', password: '' });
  const signUp = useMutation({
    ...signUpMutation(qc),
    onSuccess: async (data) => {
      await qc.invalidateQueries({ queryKey: ['me'] });
      const next = returnPath(new URLSearchParams(search).get('next'), window.location.origin);
      navigate(next === '/' ? accountPath(data.account.slug, 'agents') : next);
    },
  });
  const set = (key: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) =>
    setForm({ ...form, [key]: e.target.value });

  return (
    <main className="narrow">
      <h1>Create your account</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          signUp.mutate(form);
        }}
      >
        <Field label="Name" errors={issuesAt(signUp.error, 'name')}>
          {(control) => (
            <input {...control} value={form.name} onChange={set('name')} autoComplete="name" />
          )}
        </Field>
        <Field label="E-mail" errors={issuesAt(signUp.error, 'email')}>
          {(control) => (
            <input
              {...control}
              type="email"
              value={form.email}
              onChange={set('email')}
              autoComplete="email"
            />
          )}
        </Field>
        <Field
          label="Password"
          hint="At least 8 characters."
          errors={issuesAt(signUp.error, 'password')}
        >
          {(control) => (
            <input
              {...control}
              type="password"
              value={form.password}
              onChange={set('password')}
              autoComplete="new-password"
            />
          )}
        </Field>
        <ErrorMessage error={signUp.error} />
        <button type="submit" className="primary" disabled={signUp.isPending}>
          {signUp.isPending ? 'Creating…' : 'Sign up'}
        </button>
      </form>
      <p>
        Already have an account? <Link to={`/sign-in${search}`}>Sign in</Link>
      </p>
    </main>
  );
}
