import type { AppProvider } from '@svc/contract';
import { AppError } from '../errors.js';
import { PROVIDERS } from './providers.js';

/**
 * The scopes to ask for: the provider's base scopes plus the requested optional ones (short or
 * full form). Anything else (an unknown scope, `drive`, `drive.readonly`) is refused with
 * `scope_not_allowed` before any redirect. Naming a base scope is allowed and changes nothing.
 */
export function resolveRequestedScopes(provider: AppProvider, requested: string | undefined) {
  const definition = PROVIDERS[provider];
  const fullByAnyName = new Map<string, string>();
  for (const [short, full] of Object.entries(definition.optionalScopes)) {
    fullByAnyName.set(short, full).set(full, full);
  }
  const scopes = new Set(definition.baseScopes);
  const names = (requested ?? '').split(',').map((name) => name.trim());
  for (const name of names.filter(Boolean)) {
    if (definition.baseScopes.includes(name)) continue;
    const full = fullByAnyName.get(name);
    if (!full) throw new AppError('scope_not_allowed', { message: `scope not allowed: ${name}` });
    scopes.add(full);
  }
  return [...scopes];
}

/**
 * The granted scopes from a token response's `scope` (space- or comma-separated, as GitHub
 * sends it), with the provider's expanded forms mapped back; the requested ones when absent.
 */
export function grantedScopes(
  provider: AppProvider,
  scope: string | undefined,
  requested: readonly string[],
): string[] {
  if (!scope) return [...requested];
  const aliases = PROVIDERS[provider].scopeAliases;
  const granted = scope
    .split(/[ ,]+/)
    .filter(Boolean)
    .map((s) => aliases[s] ?? s);
  return [...new Set(granted)].sort();
}
