import { describe, expect, it } from 'vitest';
import { prng } from '../../../test/prng.js';
import { SECRET_RULES, type SecretRule } from './rules.js';
import { allowed, entropy, scanText, secretOf } from './scan.js';

/** Seeded random strings, so the corpus is the same on every run. */
function generator(seed: number) {
  const next = prng(seed);
  return (alphabet: string, length: number) =>
    Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
}
const r = generator(42);
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const HEX = '0123456789abcdef';
const B64URL = `${ALNUM}_-`;

/** Labelled corpus: each line holds one real-format secret (made up here) and its expected rule. */
const SECRETS: [string, string][] = [
  [`AWS_ACCESS_KEY_ID=AKIA${r(UPPER32, 16)}`, 'aws-access-token'],
  [`token: ghp_${r(ALNUM, 36)}`, 'github-pat'],
  [`GH_TOKEN="github_pat_${r(`${ALNUM}_`, 82)}"`, 'github-fine-grained-pat'],
  [`oauth = gho_${r(ALNUM, 36)}`, 'github-oauth'],
  [`ghs_${r(ALNUM, 36)}`, 'github-app-token'],
  [`GITLAB=glpat-${r(ALNUM, 20)}`, 'gitlab-pat'],
  [
    `SLACK_BOT=xoxb-${r('0123456789', 12)}-${r('0123456789', 12)}-${r(ALNUM, 24)}`,
    'slack-bot-token',
  ],
  [
    `hook: https://hooks.slack.com/services/T${r(ALNUM, 10)}/B${r(ALNUM, 10)}/${r(ALNUM, 24)}`,
    'slack-webhook-url',
  ],
  [`stripe.api_key = "sk_live_${r(ALNUM, 24)}"`, 'stripe-access-token'],
  [`OPENAI_API_KEY=sk-proj-${r(B64URL, 74)}T3BlbkFJ${r(B64URL, 74)}`, 'openai-api-key'],
  [`ANTHROPIC_API_KEY=sk-ant-api03-${r(B64URL, 93)}AA`, 'anthropic-api-key'],
  [`"apiKey": "AIza${r(B64URL, 35)}"`, 'gcp-api-key'],
  [`//registry.npmjs.org/:_authToken=npm_${r(ALNUM, 36)}`, 'npm-access-token'],
  [`SENDGRID=SG.${r(B64URL, 22)}.${r(B64URL, 43)}`, 'sendgrid-api-token'],
  [`twilio_key = SK${r(HEX, 32)}`, 'twilio-api-key'],
  [
    `HF_TOKEN=hf_${r('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 34)}`,
    'huggingface-access-token',
  ],
  [`DO=dop_v1_${r(HEX, 64)}`, 'digitalocean-pat'],
  [`shopify: shpat_${r(HEX, 32)}`, 'shopify-access-token'],
  [`TELEGRAM_BOT_TOKEN=${r('123456789', 10)}:A${r(B64URL, 34)}`, 'telegram-bot-api-token'],
  [`AGE-SECRET-KEY-1${r('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)}`, 'age-secret-key'],
  [
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${r(ALNUM, 70)}\n${r(ALNUM, 70)}\n-----END OPENSSH PRIVATE KEY-----`,
    'private-key',
  ],
  [`Authorization: Bearer eyJ${r(ALNUM, 30)}.eyJ${r(B64URL, 60)}.${r(B64URL, 43)}`, 'jwt'],
  [`DATABASE_URL=postgres://app:${r(ALNUM, 20)}@db.internal:5432/app`, 'url-credentials'],
  [`db_password = "${r(ALNUM, 24)}"`, 'generic-api-key'],
  [`export SERVICE_SECRET=${r(ALNUM, 32)}`, 'generic-api-key'],
  [`  "auth_token": "${r(HEX, 40)}",`, 'generic-api-key'],
];

/** Look-alikes: must stay quiet. */
const LOOKALIKES: string[] = [
  'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal placeholder is the look-alike.
  'api_key = "${API_KEY}"',
  'token: {{ secrets.token }}',
  'OPENAI_API_KEY=your-api-key-here',
  'password = "changeme"',
  'const apiKey = process.env.API_KEY;',
  'id: 3f1c2a9e-5b7d-4c1e-9a2b-7d8e6f5a4b3c',
  '"integrity": "sha512-abc"',
  'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
  'key: value',
  'token_type = "bearer"',
  'secret_name: my-app-secret',
  'ghp_short',
  'sk_live_',
  'auth: true',
  'password: null',
  'apiVersion: apps/v1',
  'keyboard = "qwerty"',
  'The access token expires after one hour.',
  'DATABASE_URL=postgres://localhost:5432/app',
  'https://user@example.com/path',
  'image: node:24-alpine',
  'let key = crypto.randomBytes(32);',
  'secretlint-disable-line',
  'background-image: url(data:image/png;base64,iVBORw0KGgo=)',
  'api_key_file = /etc/app/key.pem',
  'AUTH_PROVIDER=github.oauth.provider',
  'const tokens = tokenize(source);',
];

describe('secret scanner', () => {
  it('finds the labelled secrets and stays quiet on their look-alikes', () => {
    let found = 0;
    const missed: string[] = [];
    for (const [text, rule] of SECRETS) {
      const flags = scanText('corpus.txt', `before\n${text}\nafter\n`);
      if (flags.some((f) => f.rule === rule && f.line === 2)) found += 1;
      else missed.push(`${rule}: got ${JSON.stringify(flags.map((f) => f.rule))}`);
    }
    const noisy = LOOKALIKES.filter((text) => scanText('corpus.txt', text).length > 0);
    const recall = found / SECRETS.length;
    console.log(
      `scanner corpus: recall ${found}/${SECRETS.length} (${(recall * 100).toFixed(1)} %), false positives ${noisy.length}/${LOOKALIKES.length}`,
    );
    expect(missed).toEqual([]);
    expect(noisy).toEqual([]);
  });

  it('never puts the secret itself in a flag', () => {
    for (const [text] of SECRETS) {
      for (const flag of scanText('f', text)) {
        const printed = JSON.stringify(flag);
        // No 12-character run of the line survives into the flag.
        for (let i = 0; i + 12 <= text.length; i += 4) {
          const piece = text.slice(i, i + 12);
          if (/^[A-Za-z0-9_-]{12}$/.test(piece) && entropy(piece) > 3)
            expect(printed).not.toContain(piece);
        }
      }
    }
  });

  it('gives a stable fingerprint for the same value, and a new one for a new value', () => {
    const one = scanText('a.env', `TOKEN=ghp_${'a1B2c3D4e5'.repeat(3)}123456`);
    const moved = scanText('a.env', `\n\nTOKEN=ghp_${'a1B2c3D4e5'.repeat(3)}123456`);
    const other = scanText('a.env', `TOKEN=ghp_${'z9Y8x7W6v5'.repeat(3)}123456`);
    expect(one[0]?.fingerprint).toBe(moved[0]?.fingerprint);
    expect(moved[0]?.line).toBe(3);
    expect(other[0]?.fingerprint).not.toBe(one[0]?.fingerprint);
  });
});

/**
 * gitleaks' way without shortcuts: every rule on each line holding one of its keywords, the rules
 * whose matches span lines (or whose keywords are everywhere) on the whole text. Returns
 * `line rule` pairs, sorted.
 */
function referenceScan(text: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const run = (rule: SecretRule, chunk: string, offset: number) => {
    for (const match of chunk.matchAll(rule.regex)) {
      const secret = secretOf(match);
      if (allowed(rule, secret)) continue;
      const at = offset + match.index + match[0].indexOf(secret);
      const line = text.slice(0, at).split('\n').length;
      if (seen.has(`${line}\0${secret}`)) continue;
      seen.add(`${line}\0${secret}`);
      found.push(`${line} ${rule.id}`);
    }
  };
  const onWholeText = (rule: SecretRule) => ['private-key', 'generic-api-key'].includes(rule.id);
  const holds = (rule: SecretRule, chunk: string) =>
    rule.keywords.some((k) => chunk.toLowerCase().includes(k));
  let offset = 0;
  for (const line of text.split('\n')) {
    for (const rule of SECRET_RULES)
      if (!onWholeText(rule) && holds(rule, line)) run(rule, line, offset);
    offset += line.length + 1;
  }
  for (const rule of SECRET_RULES) if (onWholeText(rule) && holds(rule, text)) run(rule, text, 0);
  return found.sort();
}

describe('secret scanner against a plain reference', () => {
  it('finds exactly what running every rule on every keyword line finds', () => {
    const pick = generator(7);
    const lines = [
      ...SECRETS.map(([text]) => text),
      ...LOOKALIKES,
      'const apiKey = process.env.API_KEY;',
      'password_hint = "see the team vault"',
      'TASK_KEY: SKIP_THIS_ONE',
      'eyJhbGciOiJIUzI1NiJ9 and a.eyJzdWIiOiIxMjM0NTY3ODkwIn0',
      '',
    ];
    // Each of a rule's literals in place of the one an example uses (ASIA for AKIA, ghs_ for
    // ghu_): a literal listed wrongly would hide exactly these.
    const swapped = lines.flatMap((line) =>
      SECRET_RULES.flatMap((rule) => {
        const used = rule.literals?.find((literal) => line.includes(literal));
        if (!used) return [];
        return (rule.literals ?? []).filter((l) => l !== used).map((l) => line.replace(used, l));
      }),
    );
    expect(swapped.length).toBeGreaterThan(10);
    // Cases changed, secrets side by side, in quotes and behind names: what literals must not miss.
    const variants = [...lines, ...swapped].flatMap((line) => [
      line,
      line.toUpperCase(),
      line.toLowerCase(),
      `"${line}"\r`,
      `x_${line} ${line}`,
      `my_secret_key: ${line.replace(/^.*[=:] ?/, '')}`,
    ]);
    let flagged = 0;
    for (let t = 0; t < 40; t++) {
      const text = Array.from(
        { length: 60 },
        () => variants[Number.parseInt(pick('0123456789', 6), 10) % variants.length],
        // Every fourth text is one long line (a minified file).
      ).join(t % 4 === 3 ? ' ' : pick('\n\n\n ', 1) === ' ' ? '\n\n' : '\n');
      const flags = scanText('f', text).map((f) => `${f.line} ${f.rule}`);
      expect(flags.sort()).toEqual(referenceScan(text));
      flagged += flags.length;
    }
    expect(flagged).toBeGreaterThan(100);
  });
});
