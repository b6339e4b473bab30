/**
 * The service's mark: two machines stacked, the first one running. The same drawing is the
 * favicon (public/favicon.svg); it is decoration beside the name, so screen readers skip it.
 */
export function Logo() {
  return (
    <svg viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="7" fill="#1f4f8f" />
      <rect x="7" y="7.5" width="18" height="7" rx="2" fill="none" stroke="#fff" strokeWidth="2" />
      <rect x="7" y="17.5" width="18" height="7" rx="2" fill="none" stroke="#fff" strokeWidth="2" />
      <circle cx="11" cy="11" r="1.4" fill="#7fd69b" />
      <circle cx="11" cy="21" r="1.4" fill="#fff" />
      <path d="M15 11h6M15 21h6" stroke="#fff" strokeWidth="2" strokeLinecap="round" />
    </svg>
  );
}
