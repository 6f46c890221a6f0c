// Well-known token formats: what a secret looks like when somebody pastes it into a template's env. The server refuses
// them in public templates (domain/secret.ts `scanPublicEnv`); the CLI and the UI mask them in diffs. This file imports
// nothing, so that those programs can share it without the server's code (docs/architecture.md).
//
// Each format is a literal prefix and a body of its real length and alphabet, bounded: at each position the pattern
// can run at most a few hundred characters, so a scan is linear in the text whatever it holds (no nested or unbounded
// quantifier to backtrack over). A token must not be glued to a letter or digit before it: `task-…` or `ask-…` is a
// word, not an `sk-` key.

export interface TokenFormat {
  /** What kind of token, in words, for messages. */
  name: string;
  /** Its shape, without flags (the scanner combines them). */
  source: string;
}

const BEFORE = '(?<![A-Za-z0-9])';
const AFTER = '(?![A-Za-z0-9])';

export const TOKEN_FORMATS: readonly TokenFormat[] = [
  { name: 'a Hugging Face token (hf_…)', source: `hf_[A-Za-z0-9]{34,40}${AFTER}` },
  { name: 'a GitHub token (ghp_…)', source: `gh[pousr]_[A-Za-z0-9]{36}${AFTER}` },
  { name: 'a GitHub fine-grained token (github_pat_…)', source: `github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}${AFTER}` },
  // OpenAI (and look-alikes): sk-, sk-proj-, sk-svcacct-, sk-admin-, sk-ant-api03-; the body is checked for a mix of
  // letters and digits below, so a long hyphenated word after "sk-" is not taken for a key.
  { name: 'an API key (sk-…)', source: `sk-(?:proj-|svcacct-|admin-|ant-api0[0-9]-)?[A-Za-z0-9_-]{32}` },
  { name: 'an AWS access key id (AKIA…)', source: `(?:AKIA|ASIA)[A-Z0-9]{16}${AFTER}` },
  { name: 'a Slack token (xox…)', source: `xox[abposr]-[0-9]{4,20}-[A-Za-z0-9-]{8,200}` },
  // PEM (RSA, EC, OPENSSH, ENCRYPTED, none) and OpenPGP (`PGP PRIVATE KEY BLOCK`).
  {
    name: 'a private key block (-----BEGIN … PRIVATE KEY-----)',
    source: '-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----',
  },
];

/** Every format at once: one pass over the text. Group i+1 is format i. */
const SCANNER = new RegExp(`${BEFORE}(?:${TOKEN_FORMATS.map((f) => `(${f.source})`).join('|')})`, 'g');

const API_KEY = TOKEN_FORMATS.findIndex((f) => f.source.startsWith('sk-'));

/** A random key's 32 characters hold upper and lower case letters and digits; a word rarely holds all three. */
const looksRandom = (body: string) => /[A-Z]/.test(body) && /[a-z]/.test(body) && /[0-9]/.test(body);

export interface TokenMatch {
  format: TokenFormat;
  index: number;
  length: number;
}

/** Each token in `text`, in order. */
export function findTokens(text: string): TokenMatch[] {
  const found: TokenMatch[] = [];
  if (text.length < 20) return found;
  for (const match of text.matchAll(SCANNER)) {
    const group = match.findIndex((g, i) => i > 0 && g !== undefined) - 1;
    const format = TOKEN_FORMATS[group] as TokenFormat;
    if (group === API_KEY && !looksRandom(match[0].slice(-32))) continue;
    found.push({ format, index: match.index, length: match[0].length });
  }
  return found;
}

/** The first token in `text`, if any. */
export const firstToken = (text: string): TokenMatch | undefined => findTokens(text)[0];

const PREFIX = /^(?:github_pat_|gh[pousr]_|hf_|sk-(?:proj-|svcacct-|admin-|ant-api0[0-9]-)?|AKIA|ASIA|xox[abposr]-|-----BEGIN )/;
const KEY_END = '-----END ';

/**
 * `text` with each token after its prefix replaced by dots (`hf_••••••••`): enough to tell what it was, nothing of the
 * secret. A private key block is masked from its BEGIN line to its END line (or to the end of the text).
 */
export function maskTokens(text: string): string {
  const tokens = findTokens(text);
  if (tokens.length === 0) return text;
  let masked = '';
  let at = 0;
  for (const { index, length } of tokens) {
    if (index < at) continue;
    const token = text.slice(index, index + length);
    let end = index + length;
    if (token.startsWith('-----')) {
      const close = text.indexOf(KEY_END, end);
      const closed = close < 0 ? -1 : text.indexOf('-----', close + KEY_END.length);
      end = closed < 0 ? text.length : closed + 5;
    }
    masked += `${text.slice(at, index)}${PREFIX.exec(token)?.[0] ?? ''}••••••••`;
    at = end;
  }
  return masked + text.slice(at);
}

const REFERENCE = /\{\{ *secret\.[A-Za-z_][A-Za-z0-9_]* *\}\}/g;

/** Whether `value` holds nothing but secret references (and spaces): no secret in it, so shown as it is when masking. */
export const onlyReferences = (value: string): boolean => value.trim() !== '' && value.replace(REFERENCE, '').trim() === '';

/** What a masked env value shows instead of the value. */
export const ENV_MASK = '••••••••';

/** How an env value is shown masked: references as they are (they hold no secret), anything else as dots. */
export const maskedEnvValue = (value: string): string => (value === '' || onlyReferences(value) ? value : ENV_MASK);
