import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

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
  KEY_CACHE_TTL_MS: integer(2000, 0, 5000, 'How long a key lookup is cached: the longest a revoked key may still work.'),
  REQUEST_TIMEOUT_MS: integer(30_000, 1000, 600_000, 'A request must arrive whole within this time.'),
  HEADERS_TIMEOUT_MS: integer(10_000, 100, 600_000, "A request's headers must arrive within this time."),
  RATE_LIMIT_PER_MINUTE: integer(
    6000,
    0,
    10_000_000,
    'Requests one API key may make per minute (a burst of as many); 0 turns the limit off.',
  ),
  RELEASE_WEBHOOK_URL: Type.Optional(
    Type.String({ pattern: '^https?://.+', description: 'Where release webhooks are POSTed; unset, releases wait in the outbox.' }),
  ),
  RELEASE_WEBHOOK_SECRET: Type.Optional(
    Type.String({ minLength: 16, description: 'The signing secret: "whsec_<base64>" or any string of 16 characters or more.' }),
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
  SHUTDOWN_GRACE_SECONDS: integer(10, 1, 3600, 'On SIGTERM, how long the requests in flight have to finish before the process exits.'),
});
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.properties).flatMap((key) => (env[key] === undefined || env[key] === '' ? [] : [[key, env[key]]])),
  );
  const config = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  const errors = [...Value.Errors(ConfigSchema, config)];
  if (errors.length > 0) {
    throw new ConfigError(errors.map((e) => `${e.path.slice(1)}=${JSON.stringify(raw[e.path.slice(1)] ?? '')}: ${e.message}`).join('\n'));
  }
  const checked = config as Config;
  if (checked.RELEASE_WEBHOOK_URL && !checked.RELEASE_WEBHOOK_SECRET) {
    throw new ConfigError('RELEASE_WEBHOOK_SECRET must be set when RELEASE_WEBHOOK_URL is: every webhook is signed.');
  }
  return checked;
}
