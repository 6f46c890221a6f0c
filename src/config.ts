import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { secretBytes } from './releases/signature.ts';
import { parseKey } from './sealing/keyring.ts';

// The environment, read once at start-up and checked: a bad setting stops the start with a clear message.

const integer = (fallback: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: fallback, minimum, maximum, description });

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', description: 'Address to listen on.' }),
  PORT: integer(8080, 0, 65535, 'Port to listen on.'),
  DATABASE_URL: Type.String({
    default: 'sqlite:./data/podplate.db',
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    description: '`sqlite:<path>` or `postgres://user@host:port/db`.',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'Log level of the JSON logs.' },
  ),
  DB_POOL_SIZE: integer(10, 1, 1000, 'PostgreSQL: most connections one process holds.'),
  DB_STATEMENT_TIMEOUT_MS: integer(5000, 100, 600_000, 'PostgreSQL: a statement running longer is cancelled.'),
  DB_CONNECT_TIMEOUT_MS: integer(5000, 100, 600_000, 'PostgreSQL: waiting longer for a connection answers 503.'),
  DB_TRANSACTION_TIMEOUT_MS: integer(
    5000,
    100,
    600_000,
    'A transaction holding the database longer than this is rolled back and its request answered 503.',
  ),
  CACHE_MAX_MB: integer(
    32,
    0,
    65_536,
    'Megabytes of templates the read cache holds at most (their JSON text plus about 400 bytes each); 0 turns it off.',
  ),
  CACHE_MAX_KEYS: integer(10_000, 0, 10_000_000, 'API keys the read cache holds at most; 0 caches none.'),
  HEAP_GROWTH_PERCENT: integer(
    50,
    0,
    300,
    "How far (in %) the server's heap may grow past what V8's last full collection found alive before the next; a fixed factor in place of V8's adaptive one (10 %-300 %), or 0 to leave it to V8.",
  ),
  OUTBOX_RETENTION_DAYS: integer(7, 0, 36_500, 'Delivered webhook events are purged from the outbox this many days after delivery.'),
  REQUEST_TIMEOUT_MS: integer(30_000, 1000, 600_000, 'A request must arrive whole within this time.'),
  HEADERS_TIMEOUT_MS: integer(10_000, 100, 600_000, "A request's headers must arrive within this time."),
  RATE_LIMIT_PER_MINUTE: integer(
    6000,
    0,
    10_000_000,
    'Requests one API key may make per minute (a burst of as many); 0 turns the limit off.',
  ),
  QUOTA_TEMPLATES_PER_ACCOUNT: integer(10_000, 0, 100_000_000, 'Templates one account may have; 0 turns the quota off.'),
  QUOTA_BYTES_PER_ACCOUNT: integer(
    1024 ** 3,
    0,
    2 ** 50,
    "Bytes of templates one account may hold (each template's text, about its JSON size); 0 turns the quota off.",
  ),
  QUOTA_ENDPOINTS_PER_ACCOUNT: integer(1000, 0, 100_000_000, 'Endpoints one account may have; 0 turns the quota off.'),
  QUOTA_REGISTRY_AUTHS_PER_ACCOUNT: integer(100, 0, 100_000_000, 'Registry auths one account may have; 0 turns the quota off.'),
  REVISIONS_KEPT_PER_TEMPLATE: integer(
    100,
    0,
    100_000_000,
    'Revisions a template keeps: a change past it deletes the oldest in its transaction. 0 keeps every revision.',
  ),
  RELEASES_KEPT_PER_ENDPOINT: integer(
    100,
    0,
    100_000_000,
    'Releases an endpoint keeps: older ones, once finished and announced, are deleted by the change that passes it. 0 keeps all.',
  ),
  QUOTA_SECRETS_PER_ACCOUNT: integer(1000, 0, 100_000_000, 'Secrets one account may have; 0 turns the quota off.'),
  QUOTA_HISTORY_BYTES_PER_ACCOUNT: integer(
    2 * 1024 ** 3,
    0,
    2 ** 50,
    "Bytes of history one account may keep: its templates' revisions, its endpoints' releases and webhooks not yet delivered; 0 turns the quota off.",
  ),
  QUOTA_IDEMPOTENCY_KEYS_PER_ACCOUNT: integer(
    100_000,
    0,
    100_000_000,
    'Responses kept for Idempotency-Keys (each 24 hours) one account may have; 0 turns the quota off.',
  ),
  QUOTA_API_KEYS_PER_ACCOUNT: integer(
    100,
    0,
    100_000_000,
    'API keys one account may make over the API, revoked and expired ones counting for 30 days after they end; 0 turns the quota off.',
  ),
  AUTH_FAILURES_PER_MINUTE: integer(
    60,
    0,
    10_000_000,
    'Failed authentications one client address may make a minute; beyond it they are answered 429. 0 turns it off.',
  ),
  CORS_ORIGINS: Type.String({
    default: '',
    pattern: '^$|^ *(\\*|https?://[^\\s,/]+)( *, *(\\*|https?://[^\\s,/]+))* *$',
    description:
      'Origins whose pages may call the API from a browser (CORS), comma-separated, as browsers send them ("https://console.example.com", no path), or "*" for any; none by default.',
  }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(true|false|[0-9]+|[0-9A-Fa-f:./]+(,[0-9A-Fa-f:./ ]+)*)$',
    description:
      'Where the client address is read: "false" the socket; "true", a number of hops, or proxy addresses/ranges, X-Forwarded-For.',
  }),
  RELEASE_WEBHOOK_URL: Type.Optional(
    Type.String({ pattern: '^https?://.+', description: 'Where release webhooks are POSTed; unset, releases wait in the outbox.' }),
  ),
  RELEASE_WEBHOOK_SECRET: Type.Optional(
    Type.String({
      minLength: 16,
      description: 'The signing secret: "whsec_<base64 of a key of 16 bytes or more>", or any text of 16 bytes or more.',
    }),
  ),
  RELEASE_WEBHOOK_TIMEOUT_MS: integer(5000, 100, 60_000, 'A receiver that has not answered within this time has failed the attempt.'),
  RELEASE_RETRY_BASE_MS: integer(
    1000,
    10,
    3_600_000,
    'The first retry of a failed webhook waits about this long, then twice as long each time.',
  ),
  RELEASE_RETRY_MAX_MS: integer(300_000, 10, 86_400_000, 'The longest wait between two attempts.'),
  OUTBOX_POLL_MS: integer(250, 10, 60_000, 'How often each process looks for webhooks to send.'),
  SECRETS_KEY: Type.Optional(
    Type.String({
      description:
        'The key that encrypts secrets at rest (registry passwords): 32 bytes in base64. Required on PostgreSQL, the same ' +
        'in every process; on SQLite, unset, a key file beside the database is made on first start and used.',
    }),
  ),
  SECRETS_KEY_PREVIOUS: Type.Optional(
    Type.String({ description: 'The key before SECRETS_KEY, during a rotation: it still decrypts, never encrypts.' }),
  ),
  METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description: 'When set, /metrics answers only to Authorization: Bearer <this token> (16 characters or more).',
    }),
  ),
  SHUTDOWN_GRACE_SECONDS: integer(10, 1, 3600, 'On SIGTERM, how long the requests in flight have to finish before the process exits.'),
  IMAGE_CHECK: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description:
      "`on`: each template's image is checked at its registry after every change and on demand; `off`: never (installs without network).",
  }),
  IMAGE_CHECK_INSECURE_REGISTRIES: Type.String({
    default: '',
    pattern: '^[A-Za-z0-9.:\\[\\]-]*(,\\s*[A-Za-z0-9.:\\[\\]-]+)*$',
    description:
      'Registry hosts (`host[:port]`, comma-separated) checks reach over plain http and at any address, loopback and private ones included; every other host is reached over https, at public addresses only.',
  }),
  IMAGE_CHECK_TIMEOUT_MS: integer(10_000, 100, 120_000, 'Each request of an image check to a registry must be answered within this time.'),
  IMAGE_CHECK_RETRY_BASE_MS: integer(
    30_000,
    10,
    86_400_000,
    'An unreachable registry is asked again after about this long, then twice as long each time.',
  ),
  IMAGE_CHECK_RETRY_MAX_MS: integer(3_600_000, 10, 86_400_000, 'The longest wait between two checks of an unreachable registry.'),
  IMAGE_CHECK_CONCURRENCY_PER_REGISTRY: integer(4, 1, 1000, 'Image checks one process runs at once against one registry.'),
  IMAGE_CHECKS_PER_ACCOUNT_PER_MINUTE: integer(
    30,
    0,
    1_000_000,
    "Image checks of one account's templates a minute (a burst of as many); 0 turns the bound off.",
  ),
  IMAGE_CHECK_POLL_MS: integer(1000, 10, 60_000, 'How often each process looks for due image checks.'),
  DB_WAIT_SECONDS: integer(
    60,
    0,
    86_400,
    'How long a starting process waits for a database it cannot reach yet, retrying, before it exits 1; 0: it does not wait.',
  ),
  BOOTSTRAP_KEY_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Where the first start writes the first platform key when stderr is not a terminal, or always when set (mode 0600, never overwritten): ' +
        'by default beside a SQLite database (<file>.first-platform-key), else ./data/first-platform-key.',
    }),
  ),
});
export type Config = Static<typeof ConfigSchema>;

/** A setting that stops the start: its message names the setting, and what it may be. */
export class ConfigError extends Error {
  /** The settings at fault. */
  readonly settings: string[];

  constructor(message: string, settings: string[] = []) {
    super(message);
    this.settings = settings;
  }
}

/** Settings whose value is never repeated in a message. */
const SECRET_SETTINGS = new Set(['RELEASE_WEBHOOK_SECRET', 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS', 'METRICS_TOKEN']);

type SettingSchema = { type?: string; minimum?: number; maximum?: number; anyOf?: { const?: unknown }[]; description?: string };

/** What a setting may be, said from its schema: the values of a choice, the bounds of a number, or its description. */
function allowed(name: string): string {
  const schema = ConfigSchema.properties[name as keyof Config] as SettingSchema | undefined;
  if (!schema) return 'is not valid';
  if (schema.anyOf) return `must be one of ${schema.anyOf.map((choice) => String(choice.const)).join(', ')}`;
  if (schema.type === 'integer') return `must be a whole number from ${schema.minimum} to ${schema.maximum}`;
  return `is not valid: ${(schema.description ?? '').replace(/\.$/, '')}`;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.properties).flatMap((key) => (env[key] === undefined || env[key] === '' ? [] : [[key, env[key]]])),
  );
  // Value.Convert would read "1.5" as 1: a whole number is written as one.
  const notWhole = Object.entries(raw).flatMap(([name, value]) =>
    ConfigSchema.properties[name as keyof Config].type === 'integer' && !/^\s*-?\d+\s*$/.test(String(value)) ? [`/${name}`] : [],
  );
  const shown = (name: string) => (SECRET_SETTINGS.has(name) ? name : `${name}=${JSON.stringify(env[name] ?? '')}`);
  const config = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, { ...raw }));
  const wrong = [...new Set([...notWhole, ...[...Value.Errors(ConfigSchema, config)].map((e) => e.path)])].map((path) => path.slice(1));
  if (wrong.length > 0) throw new ConfigError(wrong.map((name) => `${shown(name)}: ${allowed(name)}`).join('\n'), wrong);
  const checked = config as Config;
  if (checked.RELEASE_WEBHOOK_URL && !checked.RELEASE_WEBHOOK_SECRET) {
    throw new ConfigError('RELEASE_WEBHOOK_SECRET must be set when RELEASE_WEBHOOK_URL is: every webhook is signed.', [
      'RELEASE_WEBHOOK_SECRET',
    ]);
  }
  if (checked.RELEASE_WEBHOOK_SECRET !== undefined) {
    try {
      secretBytes(checked.RELEASE_WEBHOOK_SECRET);
    } catch (error) {
      throw new ConfigError(`RELEASE_WEBHOOK_SECRET ${(error as Error).message}: make one with \`openssl rand -base64 32\`.`, [
        'RELEASE_WEBHOOK_SECRET',
      ]);
    }
  }
  for (const name of ['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS'] as const) {
    const value = checked[name];
    if (value !== undefined) {
      try {
        parseKey(value, name);
      } catch (error) {
        throw new ConfigError((error as Error).message, [name]);
      }
    }
  }
  if (checked.SECRETS_KEY_PREVIOUS && !checked.SECRETS_KEY) {
    throw new ConfigError('SECRETS_KEY_PREVIOUS is set without SECRETS_KEY: set the new key in SECRETS_KEY, and the old one here.', [
      'SECRETS_KEY_PREVIOUS',
    ]);
  }
  return checked;
}
