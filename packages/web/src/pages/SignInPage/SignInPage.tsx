import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { issuesAt } from '../../api/client.js';
import { signInMutation } from '../../api/queries/accounts.js';
import { ErrorMessage } from '../../components/ErrorMessage.js';
import { Field } from '../../components/Field.js';
import { returnPath } from '../../modules/return-to.js';
import { useTitle } from '../../modules/use-title.js';

export function SignInPage() {
  useTitle('Sign in');
  const qc = useQueryClient();
  const navigate = useNavigate();
  // `?next=`: the page that asked for a sign-in; passed on to sign-up, which returns there too.
  const { search, state } = useLocation();
  // A page that signed the user out on purpose (account deleted) says why.
  const notice = (state as { notice?: unknown } | null)?.notice;
  const [form, setForm] = useState({ email: '', password: '' });
  // Nothing cached for a previous session survives. Done here, once the account pages (and
  // their queries) are gone: clearing under them would refetch and meet 401s.
  useEffect(() => qc.clear(), [qc]);
  const signIn = useMutation({
    ...signInMutation(qc),
    onSuccess: async () => {
      await qc.resetQueries();
      navigate(returnPath(new URLSearchParams(search).get('next'), window.location.origin));
    },
  });
  const set = (key: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) =>
    setForm({ ...form, [key]: e.target.value });

  return (
    <main className="narrow">
      <h1>Sign in</h1>
      {typeof notice === 'string' && <p role="status">{notice}</p>}
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          signIn.mutate(form);
        }}
      >
        <Field label="E-mail" errors={issuesAt(signIn.error, 'email')}>
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
        <Field label="Password" errors={issuesAt(signIn.error, 'password')}>
          {(control) => (
            <input
              {...control}
              type="password"
              value={form.password}
              onChange={set('password')}
              autoComplete="current-password"
            />
          )}
        </Field>
        <ErrorMessage error={signIn.error} />
        <button type="submit" className="primary" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <Link to="/forgot-password">Forgot password?</Link>
      </p>
      <p>
        New here? <Link to={`/sign-up${search}`}>Create an account</Link>
      </p>
    </main>
  );
}
