import autocannon from 'autocannon';

// Fairness under abuse: what junk costs to refuse, and what four pages of large templates at once cost everyone else.

export interface AbuseFigures {
  /** Refusing a 1 MiB body of 100,000 unknown keys, one at a time: round trips in ms, an upper bound of server time. */
  junk: { rps: number; p50: number; p99: number; unexpected: number };
  /** Four clients reading pages of ~1 MB templates, while another tenant reads one template by id. */
  pages: { rps: number; errors: number; otherP50: number; otherP99: number; otherErrors: number; templates: number };
}

const JUNK = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`;

/** A create body of about 1 MB: 30 env values of 32,000 characters (as the reproduction had). */
const largeTemplate = (i: number) =>
  JSON.stringify({
    name: `large ${i}`,
    imageName: 'acme/large:1',
    env: Object.fromEntries(Array.from({ length: 30 }, (_, v) => [`VAR_${v}`, `${i}-${v}`.padEnd(32_000, 'x')])),
  });

export async function abuse(
  url: string,
  otherKey: string,
  otherPath: string,
  hoarderKey: string,
  large: number,
  seconds: number,
  /** Called once the large templates are stored, just before their pages are read. */
  beforePages: () => void,
) {
  // One junk body after another, each round trip timed: an upper bound of the server's time per refusal (the
  // client's own upload of 1 MiB shares the machine). autocannon misreports latencies of bodies this large.
  const times: number[] = [];
  let unexpected = 0;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until || times.length < 20) {
    const start = performance.now();
    const r = await fetch(`${url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hoarderKey}`, 'content-type': 'application/json' },
      body: JUNK,
    });
    await r.arrayBuffer();
    times.push(performance.now() - start);
    if (r.status !== 400) unexpected++;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] as number);
  const junk = { rps: times.length / seconds, p50: at(0.5), p99: at(0.99), unexpected };

  for (let i = 0; i < large; i++) {
    const r = await fetch(`${url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hoarderKey}`, 'content-type': 'application/json' },
      body: largeTemplate(i),
    });
    if (r.status !== 200) throw new Error(`seeding a large template: ${r.status} ${await r.text()}`);
  }
  beforePages();
  const [pages, other] = await Promise.all([
    autocannon({
      url: `${url}/v1/templates?limit=1000`,
      connections: 4,
      duration: seconds,
      headers: { authorization: `Bearer ${hoarderKey}` },
    }),
    autocannon({ url: `${url}${otherPath}`, connections: 1, duration: seconds, headers: { authorization: `Bearer ${otherKey}` } }),
  ]);
  return {
    junk,
    pages: {
      rps: pages.requests.average,
      errors: pages.errors + pages.timeouts + pages.non2xx,
      otherP50: other.latency.p50,
      otherP99: other.latency.p99,
      otherErrors: other.errors + other.timeouts + other.non2xx,
      templates: large,
    },
  } satisfies AbuseFigures;
}
