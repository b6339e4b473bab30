import { useTitle } from '../../modules/use-title.js';
import { ApiTokensSection } from './ApiTokensSection.js';
import { DeleteAccountSection } from './DeleteAccountSection.js';
import { EmailForm } from './EmailForm.js';
import { NameForm } from './NameForm.js';
import { NoticesSection } from './NoticesSection.js';
import { PasswordForm } from './PasswordForm.js';
import { SessionsList } from './SessionsList.js';

/**
 * The signed-in user's own settings: name, e-mail, password, the notices they are mailed, the
 * browsers signed in, API tokens, and deleting the account.
 */
export function SettingsPage() {
  useTitle('Settings');
  return (
    <div className="narrow">
      <h1>Settings</h1>
      <NameForm />
      <EmailForm />
      <PasswordForm />
      <NoticesSection />
      <SessionsList />
      <ApiTokensSection />
      <DeleteAccountSection />
    </div>
  );
}
