import { isIP } from 'node:net';
import addressparser from 'nodemailer/lib/addressparser';

/** `Name <address>` or a bare address: one mailbox, as the From header of every message. */
export function isMailbox(value: string): boolean {
  const parsed = addressparser(value, { flatten: true });
  return parsed.length === 1 && /^[^\s@]+@[^\s@]+$/.test(parsed[0]?.address ?? '');
}

/** `svc <noreply@host>` on the public URL's host; an IP address has no mail domain: localhost. */
export function defaultMailFrom(publicUrl: string): string {
  const host = new URL(publicUrl).hostname;
  return `svc <noreply@${isIP(host.replace(/^\[|\]$/g, '')) === 0 ? host : 'localhost'}>`;
}

/** This host, as `URL` spells its hostname: 127.0.0.0/8, ::1 or localhost. */
const isLoopbackHost = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);

/**
 * `SMTP_URL` without its password, which goes to `Secrets`: the rest (user, host, port, options)
 * stays in the loggable configuration, so an operator can see where mail goes. Over `smtp://` to
 * another host with a user, `requireTLS=true` is set: STARTTLS is only used when the server
 * offers it, and anyone on the path can strip the offer and read the login in clear.
 */
export function splitSmtpUrl(raw: string): { url: string; password?: string } {
  const url = new URL(raw);
  // Kept percent-encoded, as the URL holds it: putting it back with the setter restores `raw`.
  const password = url.password;
  url.password = '';
  if (url.protocol === 'smtp:' && url.username && !isLoopbackHost(url.hostname)) {
    url.searchParams.set('requireTLS', 'true');
  }
  return { url: url.href, ...(password && { password }) };
}
