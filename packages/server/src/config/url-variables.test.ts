import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

/** Variables whose URL a secret travels to (or whose answers vouch for one). */
const SECRET_BEARING = [
  'HCLOUD_ENDPOINT',
  'STRIPE_API_URL',
  'SUITE_ISSUER',
  'SUITE_AUTHORIZATION_URL',
  'SUITE_TOKEN_URL',
  'SUITE_REVOCATION_URL',
  'SUITE_JWKS_URL',
  'SUITE_USERINFO_URL',
  'CODE_AUTHORIZATION_URL',
  'CODE_TOKEN_URL',
  'CODE_API_URL',
  'MUSIC_AUTHORIZATION_URL',
  'MUSIC_TOKEN_URL',
  'MUSIC_API_URL',
] as const;
/** Every URL variable that must not carry a user or password. */
const WITHOUT_CREDENTIALS = [...SECRET_BEARING, 'PUBLIC_URL', 'INCUS_URL', 'S3_ENDPOINT'] as const;

/** The problems loadConfig reports for `env` (none: an empty list). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    return (error as { problems?: string[] }).problems ?? [String(error)];
  }
}

describe('URL variables', () => {
  it.each(SECRET_BEARING)(
    '%s goes over HTTPS, or plain HTTP to this host as URL reads it',
    (name) => {
      for (const local of ['http://127.0.0.1:12111', 'http://localhost:9/v1', 'http://[::1]:9']) {
        expect(problems({ [name]: local }), local).toEqual([]);
      }
      expect(problems({ [name]: 'https://api.example.com/v1' })).toEqual([]);
      // The text starts like this host's; the host is another one (localhost is the user name).
      for (const away of [
        'http://localhost:1@evil.example/',
        'http://127.0.0.1@evil.example:80/',
        'http://localhost.evil.example/',
        'http://evil.example/',
      ]) {
        expect(problems({ [name]: away }), away).toContain(
          `${name}: an https:// URL (plain http:// only to this host)`,
        );
      }
    },
  );

  it.each(WITHOUT_CREDENTIALS)(
    '%s refuses a user or password part, naming the variable only',
    (name) => {
      for (const value of [
        `https://user:hunter2@host.example:8443/`,
        `https://hunter2@host.example/`,
        `https://:hunter2@host.example/`,
      ]) {
        const found = problems({ [name]: value });
        expect(found, value).toContain(
          `${name}: a URL without a user or password part (no user:password@)`,
        );
        expect(found.join('\n')).not.toContain('hunter2');
      }
    },
  );

  it('keeps DATABASE_URL and SMTP_URL, whose password is documented to go in the URL', () => {
    const { config, secrets } = loadConfig({
      DATABASE_URL: 'postgres://svc:pw@db.example:5432/svc',
      SMTP_URL: 'smtp://mailer:pw@mail.example:587',
    });
    expect(config.database.kind).toBe('postgres');
    expect(secrets.smtpPassword).toBe('pw');
  });
});
