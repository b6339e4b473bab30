import type { AppProvider, AppProviderEntry } from '@svc/contract';

/** How the service learns who the user is at the provider. */
export type IdentitySource = 'id-token' | 'code-api' | 'music-api';
/** How a connection is revoked on delete: RFC 7009, GitHub's token API, or not at all. */
export type RevocationKind = 'rfc7009' | 'code-api' | 'none';

/** A provider registry entry: the public projection plus what the OAuth flow needs. */
export interface ProviderDefinition {
  /** What `GET /api/apps/providers` shows, but whether the operator configured it. */
  readonly entry: Omit<AppProviderEntry, 'configured'>;
  /** Scopes every connection of this provider asks for. */
  readonly baseScopes: readonly string[];
  /** Optional scopes by short name → the identifier sent to the provider. */
  readonly optionalScopes: Readonly<Record<string, string>>;
  /** Short names of scopes the provider sends back expanded (Google's `userinfo.*`). */
  readonly scopeAliases: Readonly<Record<string, string>>;
  /** Joins scopes in the authorize request (GitHub: comma). */
  readonly scopeSeparator: ' ' | ',';
  readonly extraAuthorizeParams: Readonly<Record<string, string>>;
  readonly identity: IdentitySource;
  readonly revocation: RevocationKind;
  /** `false`: tokens do not expire and are never refreshed (`code`). */
  readonly refreshes: boolean;
}

const GOOGLE = 'https://www.googleapis.com/auth/';

export const PROVIDERS: Readonly<Record<AppProvider, ProviderDefinition>> = {
  suite: {
    entry: {
      provider: 'suite',
      displayName: 'Productivity suite',
      description: 'Mail, calendar, spreadsheets, documents, contacts and per-file drive access',
      envVar: 'GOG_ACCESS_TOKEN',
      accountEnvVar: 'GOG_ACCOUNT',
      tool: { name: 'gog', installCmd: 'npm install -g gogcli', checkCmd: 'gog --version' },
      exampleCommand: 'gog calendar events list --max 5',
      tokenLifetime: '~1 hour',
      scopeLabels: {
        'gmail.send': 'Send mail',
        calendar: 'Calendar',
        spreadsheets: 'Spreadsheets',
        documents: 'Documents',
        contacts: 'Contacts',
        'drive.file': 'Drive files opened or created with the app',
      },
    },
    baseScopes: ['openid', 'email', 'profile'],
    // An allowlist: `drive`, `drive.readonly` and every other restricted scope are refused.
    optionalScopes: Object.fromEntries(
      ['gmail.send', 'calendar', 'spreadsheets', 'documents', 'contacts', 'drive.file'].map(
        (name) => [name, `${GOOGLE}${name}`],
      ),
    ),
    scopeAliases: {
      [`${GOOGLE}userinfo.email`]: 'email',
      [`${GOOGLE}userinfo.profile`]: 'profile',
    },
    scopeSeparator: ' ',
    extraAuthorizeParams: {
      access_type: 'offline',
      prompt: 'consent select_account',
      include_granted_scopes: 'true',
    },
    identity: 'id-token',
    revocation: 'rfc7009',
    refreshes: true,
  },
  code: {
    entry: {
      provider: 'code',
      displayName: 'Code hosting',
      description: 'Repositories, user profile and organization membership',
      envVar: 'GH_TOKEN',
      accountEnvVar: 'GH_ACCOUNT',
      tool: { name: 'gh', installCmd: 'apt-get install -y gh', checkCmd: 'gh --version' },
      exampleCommand: 'gh repo list --limit 5',
      tokenLifetime: 'long-lived (revoked after ~1 year unused)',
      scopeLabels: {},
    },
    baseScopes: ['repo', 'user', 'read:org'],
    optionalScopes: {},
    scopeAliases: {},
    scopeSeparator: ',',
    extraAuthorizeParams: {},
    identity: 'code-api',
    revocation: 'code-api',
    refreshes: false,
  },
  music: {
    entry: {
      provider: 'music',
      displayName: 'Music streaming',
      description: 'Profile, playlists, playback, recently played and top tracks',
      envVar: 'SPOTIFY_ACCESS_TOKEN',
      accountEnvVar: 'SPOTIFY_ACCOUNT',
      tool: {
        name: 'spotify_player',
        installCmd: 'cargo install spotify_player',
        checkCmd: 'spotify_player --version',
      },
      exampleCommand: 'spotify_player get key playlists',
      tokenLifetime: '~1 hour',
      scopeLabels: {},
    },
    baseScopes: [
      'user-read-private',
      'user-read-email',
      'playlist-read-private',
      'playlist-read-collaborative',
      'playlist-modify-public',
      'playlist-modify-private',
      'user-read-playback-state',
      'user-modify-playback-state',
      'user-read-recently-played',
      'user-top-read',
    ],
    optionalScopes: {},
    scopeAliases: {},
    scopeSeparator: ' ',
    extraAuthorizeParams: {},
    identity: 'music-api',
    revocation: 'none',
    refreshes: true,
  },
};

/** The public registry, as `GET /api/apps/providers` answers it. */
export const providerEntries = (
  isConfigured: (provider: AppProvider) => boolean,
): AppProviderEntry[] =>
  Object.values(PROVIDERS).map((p) => ({ ...p.entry, configured: isConfigured(p.entry.provider) }));
