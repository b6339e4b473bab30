import { Link } from 'react-router';
import { useTitle } from '../modules/use-title.js';

export function NotFoundPage() {
  useTitle('Page not found');
  return (
    <main className="narrow">
      <h1>Page not found</h1>
      <Link to="/">Go to the dashboard</Link>
    </main>
  );
}
