import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { catalogueTemplate } from './catalogue.ts';
import { database, podplate, start, stop } from './processes.ts';
import { SETTINGS } from './settings.ts';

// Webhook delivery with a large outbox of delivered events (issue #19): the events a server delivers per second,
// from their enqueueing to a local receiver's acknowledgement, with no delivered rows and with SETTINGS.delivered
// of them, which housekeeping keeps for OUTBOX_RETENTION_DAYS. Pending events are found by partial indexes of the
// undelivered rows (migration 0009), so the second figure should be the first's.

export interface Delivery {
  dialect: string;
  /** Delivered rows in the outbox when the rounds began (counted). */
  delivered: number;
  /** Events per round, and the rounds' rates (events/s, enqueue to acknowledgement). */
  events: number;
  rates: number[];
  /** The median round's rate. */
  rate: number;
}

const ROUNDS = 3;

/** A release event's payload, as the service writes it: the release, its endpoint and the template (about 1 KB). */
function payload(n: number, at: string): string {
  const { ownerId: _owner, endpointId: _endpoint, ...template } = catalogueTemplate(n, 1_000_000);
  return JSON.stringify({
    type: 'release.created',
    timestamp: at,
    data: {
      release: {
        id: `rel${n}`,
        version: 2,
        templateRevision: 2,
        diff: [{ field: 'imageName', from: 'a:1', to: 'a:2' }],
        status: 'pending',
      },
      endpoint: { id: `ep${n}`, name: `endpoint ${n}`, workersMin: 0, workersMax: 3 },
      template,
    },
  });
}

const COLUMNS = 'event_id, type, subject_id, ordering_key, payload, created_at, attempts, next_attempt_at, delivered_at';

/** Writes `count` events, as `enqueue` does: pending, each of its own endpoint (so none waits for another). */
async function enqueue(url: string, round: string, count: number): Promise<void> {
  const at = new Date().toISOString();
  const rows = Array.from({ length: count }, (_, i) => [
    `evt_${round}_${i}`,
    'release.created',
    `rel_${round}_${i}`,
    `ep_${round}_${i}`,
    payload(i, at),
  ]);
  if (url.startsWith('sqlite:')) {
    const db = new SQLite(url.slice('sqlite:'.length));
    db.pragma('busy_timeout = 10000');
    const insert = db.prepare(`insert into outbox (${COLUMNS}) values (?, ?, ?, ?, ?, ?, 0, ?, null)`);
    db.transaction(() => {
      for (const r of rows) insert.run(...r, at, at);
    })();
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `insert into outbox (${COLUMNS}) select e, 'release.created', s, o, p, $5, 0, $5, null
     from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as r(e, s, o, p)`,
    [rows.map((r) => r[0]), rows.map((r) => r[2]), rows.map((r) => r[3]), rows.map((r) => r[4]), at],
  );
  await client.end();
}

/** Writes `count` delivered events, delivered a day ago (within the retention: housekeeping keeps them). */
async function seedDelivered(url: string, count: number): Promise<void> {
  const at = new Date(Date.now() - 86_400_000).toISOString();
  const body = payload(0, at);
  const values = `'evt_d' || g, 'release.created', 'rel_d' || g, 'ep_d' || (g % 20000), ?, ?, 1, ?, ?`;
  if (url.startsWith('sqlite:')) {
    const db = new SQLite(url.slice('sqlite:'.length));
    db.pragma('synchronous = OFF');
    const insert = db.prepare(`insert into outbox (${COLUMNS}) with recursive s(g) as (select ? union all select g + 1 from s where g < ?)
      select ${values} from s`);
    for (let from = 0; from < count; from += 100_000) insert.run(from, Math.min(count, from + 100_000) - 1, body, at, at, at);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let n = 0;
  await client.query(
    `insert into outbox (${COLUMNS}) select ${values.replace(/\?/g, () => `$${++n}`)} from generate_series(0, $5::int - 1) g`,
    [body, at, at, at, count],
  );
  await client.query('analyze outbox');
  await client.end();
}

async function countDelivered(url: string): Promise<number> {
  const q = 'select count(*) as n from outbox where delivered_at is not null';
  if (url.startsWith('sqlite:')) {
    const db = new SQLite(url.slice('sqlite:'.length), { readonly: true });
    const { n } = db.prepare(q).get() as { n: number };
    db.close();
    return n;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query(q);
  await client.end();
  return Number(rows[0].n);
}

/** The delivery rate with an empty outbox, then with SETTINGS.delivered delivered events in it. */
export async function outboxDelivery(dialect: string): Promise<Delivery[]> {
  let acknowledged = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      acknowledged++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const db = await database(dialect, 'outbox');
  const env = {
    DATABASE_URL: db.url,
    LOG_LEVEL: 'warn',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    RELEASE_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks`,
    RELEASE_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    OUTBOX_POLL_MS: '10',
  };
  const out: Delivery[] = [];
  try {
    podplate(['migrate'], env);
    for (const delivered of [0, SETTINGS.delivered]) {
      if (delivered > 0) await seedDelivered(db.url, delivered);
      const present = await countDelivered(db.url);
      const server = await start(['bin/podplate.js', 'serve'], env, false);
      try {
        const deliver = async (round: string, count: number) => {
          const target = acknowledged + count;
          await enqueue(db.url, round, count);
          const started = performance.now();
          const deadline = Date.now() + 120_000;
          while (acknowledged < target) {
            if (Date.now() > deadline) throw new Error(`outbox: ${target - acknowledged} of ${count} events not delivered in 120 s`);
            await new Promise((r) => setTimeout(r, 2));
          }
          return count / ((performance.now() - started) / 1000);
        };
        await deliver(`warm${delivered}`, Math.min(100, SETTINGS.events));
        const rates: number[] = [];
        for (let i = 0; i < ROUNDS; i++) rates.push(await deliver(`r${delivered}_${i}`, SETTINGS.events));
        out.push({
          dialect,
          delivered: present,
          events: SETTINGS.events,
          rates,
          rate: [...rates].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] as number,
        });
      } finally {
        await stop(server);
      }
    }
  } finally {
    await db.drop();
    receiver.close();
  }
  return out;
}
