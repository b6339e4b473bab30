/**
 * Secret rules. Rule ids, keywords, token formats, entropy thresholds and the global allowlist
 * follow gitleaks' default configuration (https://github.com/gitleaks/gitleaks,
 * `config/gitleaks.toml`; MIT License, Copyright (c) 2019 Zachary Rice), rewritten here as
 * JavaScript regular expressions for the formats an Agent's home is likely to hold. See NOTICE
 * in this folder.
 */
export interface SecretRule {
  readonly id: string;
  /** Lower-case strings; the rule runs only on text containing one of them (cheap prefilter). */
  readonly keywords: readonly string[];
  /**
   * Case-sensitive strings, one of which every match of `regex` contains: the scanner finds them
   * with `indexOf` (fast) instead of looking for the keywords. None: the rule runs on every text.
   */
  readonly literals?: readonly string[];
  /**
   * Global; the last capture group that matched is the secret (earlier ones serve the pattern),
   * else the whole match.
   */
  readonly regex: RegExp;
  /** Minimum Shannon entropy (bits per character) of the secret. */
  readonly entropy?: number;
  /** Secrets matching one of these are not reported. */
  readonly allow?: readonly RegExp[];
}

// gitleaks' "assignment" shape: a name containing the keyword, an operator, then the value.
// gitleaks starts with `[\w.-]{0,50}?` to take in the whole name; the value is the same without
// it, and the regex is several times faster when it starts at the keyword. The rest of the name
// is taken whole (`(?=(…))\1`, an atomic group): giving back name characters never lets an
// operator match (none is a name character), and trying to made every keyword that no operator
// follows (`keys and secrets`) cost hundreds of steps.
const ASSIGN = String.raw`(?:KEYWORD)(?=([ \t\w.-]{0,20}))\1[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}`;
const END = String.raw`(?:[\x60'"\s;]|\\[nr]|$)`;
// `m`: `$` ends a line, as when gitleaks scans a file line by line.
const assigned = (keyword: string, value: string, flags = 'gim') =>
  new RegExp(`${ASSIGN.replace('KEYWORD', keyword)}(${value})${END}`, flags);

export const SECRET_RULES: readonly SecretRule[] = [
  {
    id: 'aws-access-token',
    keywords: ['a3t', 'akia', 'asia', 'abia', 'acca'],
    literals: ['A3T', 'AKIA', 'ASIA', 'ABIA', 'ACCA'],
    regex: /\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g,
    entropy: 3,
    allow: [/EXAMPLE$/],
  },
  {
    id: 'github-pat',
    keywords: ['ghp_'],
    literals: ['ghp_'],
    regex: /\bghp_[0-9a-zA-Z]{36}\b/g,
    entropy: 3,
  },
  {
    id: 'github-fine-grained-pat',
    keywords: ['github_pat_'],
    literals: ['github_pat_'],
    regex: /\bgithub_pat_\w{82}\b/g,
    entropy: 3,
  },
  {
    id: 'github-oauth',
    keywords: ['gho_'],
    literals: ['gho_'],
    regex: /\bgho_[0-9a-zA-Z]{36}\b/g,
    entropy: 3,
  },
  {
    id: 'github-app-token',
    keywords: ['ghu_', 'ghs_'],
    literals: ['ghu_', 'ghs_'],
    regex: /\b(?:ghu|ghs)_[0-9a-zA-Z]{36}\b/g,
    entropy: 3,
  },
  {
    id: 'github-refresh-token',
    keywords: ['ghr_'],
    literals: ['ghr_'],
    regex: /\bghr_[0-9a-zA-Z]{36}\b/g,
    entropy: 3,
  },
  {
    id: 'gitlab-pat',
    keywords: ['glpat-'],
    literals: ['glpat-'],
    regex: /\bglpat-[\w-]{20}\b/g,
    entropy: 3,
  },
  {
    id: 'slack-bot-token',
    keywords: ['xoxb'],
    literals: ['xoxb-'],
    regex: /\bxoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*/g,
  },
  {
    id: 'slack-user-token',
    keywords: ['xoxp-', 'xoxe-'],
    literals: ['xoxp-', 'xoxe-'],
    regex: /\bxox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}/g,
  },
  {
    id: 'slack-webhook-url',
    keywords: ['hooks.slack.com'],
    literals: ['hooks.slack.com'],
    regex:
      /(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{43,56}/g,
  },
  {
    id: 'stripe-access-token',
    keywords: ['sk_test', 'sk_live', 'sk_prod', 'rk_test', 'rk_live', 'rk_prod'],
    literals: ['sk_test', 'sk_live', 'sk_prod', 'rk_test', 'rk_live', 'rk_prod'],
    regex: /\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})\b/g,
    entropy: 2,
  },
  {
    id: 'openai-api-key',
    keywords: ['t3blbkfj'],
    literals: ['T3BlbkFJ'],
    regex:
      /\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})/g,
    entropy: 3,
  },
  {
    id: 'anthropic-api-key',
    keywords: ['sk-ant-api03'],
    literals: ['sk-ant-api03'],
    regex: /\b(sk-ant-api03-[a-zA-Z0-9_-]{93}AA)(?:[\x60'"\s;]|\\[nr]|$)/g,
  },
  {
    id: 'gcp-api-key',
    keywords: ['aiza'],
    literals: ['AIza'],
    regex: /\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)/g,
    entropy: 4,
  },
  {
    id: 'npm-access-token',
    keywords: ['npm_'],
    literals: ['npm_'],
    regex: /\b(npm_[a-zA-Z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)/g,
    entropy: 2,
  },
  {
    id: 'sendgrid-api-token',
    keywords: ['sg.'],
    literals: ['SG.'],
    regex: /\b(SG\.[a-zA-Z0-9=_\-.]{66})(?:[\x60'"\s;]|\\[nr]|$)/g,
    entropy: 2,
  },
  {
    id: 'twilio-api-key',
    keywords: ['sk'],
    literals: ['SK'],
    regex: /\bSK[0-9a-fA-F]{32}\b/g,
    entropy: 3,
  },
  {
    id: 'huggingface-access-token',
    keywords: ['hf_'],
    literals: ['hf_'],
    regex: /(?:^|[\\'"\x60\s>=:(,)])(hf_[a-zA-Z]{34})(?:$|[\\'"\x60\s<),])/g,
    entropy: 2,
  },
  {
    id: 'digitalocean-pat',
    keywords: ['dop_v1_'],
    literals: ['dop_v1_'],
    regex: /\b(dop_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)/g,
    entropy: 3,
  },
  {
    id: 'shopify-access-token',
    keywords: ['shpat_'],
    literals: ['shpat_'],
    regex: /\bshpat_[a-fA-F0-9]{32}\b/g,
    entropy: 2,
  },
  {
    id: 'pypi-upload-token',
    keywords: ['pypi-ageichlwas5vcmc'],
    literals: ['pypi-AgEIcHlwaS5vcmc'],
    regex: /pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}/g,
  },
  {
    id: 'telegram-bot-api-token',
    keywords: ['telegr', ':a'],
    literals: [':A'],
    regex: /(?:^|[^0-9])([0-9]{5,16}:A[a-zA-Z0-9_-]{34})(?:[^a-zA-Z0-9_-]|$)/g,
  },
  {
    id: 'age-secret-key',
    keywords: ['age-secret-key-1'],
    literals: ['AGE-SECRET-KEY-1'],
    regex: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/g,
  },
  {
    id: 'private-key',
    keywords: ['-----begin'],
    literals: ['-----BEGIN'],
    regex:
      /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----/g,
  },
  {
    id: 'jwt',
    // Every JWT starts with `eyJ` (base64 of `{"`); gitleaks' `ey` wakes the rule on every "key".
    keywords: ['eyj'],
    // The dot before the payload: rarer than `ey`, and in every match (the keyword is also checked).
    literals: ['.ey'],
    regex:
      /\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)/g,
    entropy: 3,
  },
  {
    // Credentials in a connection URL (`scheme://user:password@host`).
    id: 'url-credentials',
    keywords: ['://'],
    literals: ['://'],
    regex:
      /\b(?:https?|ftp|postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqps?):\/\/[^:\s/@'"]{1,100}:([^@\s/'"]{3,100})@[\w.-]+/g,
    entropy: 2.5,
  },
  {
    id: 'generic-api-key',
    keywords: [
      'access',
      'api',
      'auth',
      'key',
      'credential',
      'creds',
      'passwd',
      'password',
      'secret',
      'token',
    ],
    regex: assigned(
      'access|auth|api|credential|creds|key|passw(?:or)?d|secret|token',
      String.raw`[\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3}`,
    ),
    entropy: 3.5,
    allow: [
      // Identifiers and file names rather than values.
      /^[a-z_]+(?:\.[a-z_]+)+$/i,
      /^[a-zA-Z_]+$/,
      /^(?:[a-z]+[-_])+[a-z]+$/,
    ],
  },
];

/** gitleaks' global allowlist, for values: placeholders, templates and repeated characters. */
export const ALLOWED_SECRETS: readonly RegExp[] = [
  /^(?:true|false|null)$/i,
  /^(?:a+|b+|c+|d+|e+|f+|x+|\*+|\.+|0+)$/i,
  /^\$(?:\d+|\{\d+\})$/,
  /^\$(?:[A-Z_]+|[a-z_]+)$/,
  /^\$\{(?:[A-Z_]+|[a-z_]+)\}$/,
  /^\{\{[ \t]*[\w ().|]+[ \t]*\}\}$/,
  /^%(?:[A-Z_]+|[a-z_]+)%$/,
  /^@(?:[A-Z_]+|[a-z_]+)@$/,
  /^\/(?:bin|etc|home|opt|tmp|usr|var)\/[\w ./-]+$/,
  /^<[^>]*>$/,
];

/** Values containing one of these are examples, not secrets. */
export const STOPWORDS: readonly string[] = [
  '014df517-39d1-4453-b7b3-9930c563627c',
  'abcdefghijklmnopqrstuvwxyz',
  'example',
  'placeholder',
  'your-',
  'your_',
  'xxxxxxxx',
  'changeme',
];
