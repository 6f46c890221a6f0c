// Made-up tokens in the real shapes of well-known formats (none is a live credential), and look-alikes that are not.

const alnum = (n: number, seed = 7) => {
  const alphabet = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[(i * seed + 3) % alphabet.length];
  return s;
};

export const TOKENS: Record<string, string> = {
  'Hugging Face': `hf_${alnum(34)}`,
  'GitHub classic': `ghp_${alnum(36)}`,
  'GitHub OAuth': `gho_${alnum(36, 11)}`,
  'GitHub fine-grained': `github_pat_11${alnum(20)}_${alnum(59, 13)}`,
  'OpenAI legacy': `sk-${alnum(48)}`,
  'OpenAI project': `sk-proj-${alnum(40, 5)}-${alnum(20, 3)}`,
  'AWS access key id': 'AKIAIOSFODNN7EXAMPLE',
  'Slack bot': `xoxb-1234567890-1234567890123-${alnum(24)}`,
  'RSA private key': `-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA${alnum(60)}\n-----END RSA PRIVATE KEY-----`,
  'OpenSSH private key': `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${alnum(40)}\n-----END OPENSSH PRIVATE KEY-----\n`,
  'PKCS#8 private key': `-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC${alnum(30)}\n-----END PRIVATE KEY-----`,
};

/** A token inside other text, as people paste them. */
export const EMBEDDED: Record<string, string> = {
  'a bearer header': `Authorization: Bearer ${TOKENS['OpenAI legacy']}`,
  'a URL': `https://user:${TOKENS['GitHub classic']}@github.com/org/repo.git`,
  'a quoted JSON value': `{"token":"${TOKENS['Hugging Face']}"}`,
  'an assignment': `AWS_ACCESS_KEY_ID=${TOKENS['AWS access key id']}`,
};

/** Ordinary values that share a prefix or a look with a token, and must pass. */
export const LOOK_ALIKES: string[] = [
  'task-runner-with-a-very-long-name-that-goes-on-and-on-1234',
  'sk-learn-intelex-accelerated-build-for-the-cpu-variant',
  'risk-assessment-model-v2-0123456789abcdefABCDEF0123456789',
  'https://huggingface.co/stabilityai/sdxl-turbo',
  'hf_transfer',
  '/workspace/hf_cache/hub/models--stabilityai--sdxl-turbo',
  'ghp_short',
  'AKIA',
  'MAKIAIOSFODNN7EXAMPLE1',
  'xoxo-hugs-and-kisses-from-the-team-0123',
  '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----',
  '{{ secret.HF_TOKEN }}',
  'Bearer {{ secret.OPENAI_API_KEY }}',
  '0123456789abcdef0123456789abcdef0123456789abcdef',
];
