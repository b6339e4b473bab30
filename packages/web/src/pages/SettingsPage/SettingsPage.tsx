import { Link } from 'react-router';
import { NameForm } from './NameForm.js';
import { PasswordForm } from './PasswordForm.js';
import { SessionsList } from './SessionsList.js';

/** The signed-in user's own settings: name, password, the browsers signed in. */
export function SettingsPage() {
  return (
    <main className="narrow">
      <p>
        <Link to="/">← Dashboard</Link>
      </p>
      <h1>Settings</h1>
      <NameForm />
      <PasswordForm />
      <SessionsList />
    </main>
  );
}
