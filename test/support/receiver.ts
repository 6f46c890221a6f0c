import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';

// A webhook receiver for tests: checks every Standard Webhooks signature on its own (not with the service's code),
// answers as told, and notes whether one event ever arrived twice at the same time.

export interface Received {
  id: string;
  timestamp: number;
  body: any;
  verified: boolean;
}

export class Receiver {
  readonly received: Received[] = [];
  /** Webhook ids that arrived while an earlier attempt of the same id was still being answered. */
  readonly overlapping: string[] = [];
  status = 200;
  delayMs = 0;
  /** Event ids to refuse (with a 500) this many more times each. */
  readonly refuse = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  private server: Server | undefined;

  private readonly secret: string;

  constructor(secret: string) {
    this.secret = secret;
  }

  /** Attempts being answered right now. */
  get holding(): number {
    return this.inFlight.size;
  }

  async listen(port = 0): Promise<number> {
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk) => {
        raw += chunk;
      });
      req.on('end', async () => {
        const id = String(req.headers['webhook-id']);
        if (this.inFlight.has(id)) this.overlapping.push(id);
        this.inFlight.add(id);
        const timestamp = Number(req.headers['webhook-timestamp']);
        const expected = createHmac('sha256', Buffer.from(this.secret.replace(/^whsec_/, ''), 'base64'))
          .update(`${id}.${timestamp}.${raw}`)
          .digest();
        const given = String(req.headers['webhook-signature'] ?? '')
          .split(' ')
          .map((s) => Buffer.from(s.replace(/^v1,/, ''), 'base64'));
        const verified =
          given.some((g) => g.length === expected.length && timingSafeEqual(g, expected)) && Math.abs(Date.now() / 1000 - timestamp) < 300;
        if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
        const refusals = this.refuse.get(id) ?? 0;
        if (refusals > 0) this.refuse.set(id, refusals - 1);
        const status = refusals > 0 ? 500 : this.status;
        if (status >= 200 && status < 300) this.received.push({ id, timestamp, body: JSON.parse(raw), verified });
        this.inFlight.delete(id);
        res.writeHead(status).end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** The distinct event ids acknowledged so far. */
  ids(): Set<string> {
    return new Set(this.received.map((r) => r.id));
  }
}

/** Waits until `condition` holds; fails after `timeoutMs` (a bound against hanging, not a speed check). */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const SECRET = `whsec_${Buffer.from('podplate test signing secret 32b').toString('base64')}`;
