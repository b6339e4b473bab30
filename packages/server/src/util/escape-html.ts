/** Escapes text for HTML content and quoted attribute values (pages and mail alike). */
export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
