import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';

// A key sent where it doesn't belong — a query parameter named like a secret, a path, a search — is refused or
// served, but never written to the logs: logged URLs are redacted, at every level. So are the raw bytes of a request
// the HTTP parser refuses. Scanned in the JSON log lines of a real `podplate serve`, at LOG_LEVEL=trace and info.

/** Sends `text` on a raw connection and resolves with the answer, once the server closes the connection. */
function raw(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

forEachDialect('secrets in logged URLs', (dialect) => {
  for (const level of ['trace', 'info'] as const)
    describe(`LOG_LEVEL=${level}`, () => {
      let db: Database;
      let server: ServerProcess;
      let key: string;
      const secrets = ['hunter2-secret-value', 's3cr3t-client-value', 'tok-value-123', 'xyz-api-key-value', 'sess-value-9'];

      before(async () => {
        db = await freshDatabase(dialect);
        const env = { DATABASE_URL: db.url, LOG_LEVEL: level, RATE_LIMIT_PER_MINUTE: '0' };
        key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
        assert.match(key, /^pp_[A-Za-z0-9_-]{43}$/);
        server = await startServer(env);
      });
      after(async () => {
        await server.stop();
        await db.drop();
      });

      test(`no log line holds a key or a secret-named parameter's value; the URLs are still there`, async () => {
        const auth = { authorization: `Bearer ${key}` };
        const requests: [string, Record<string, string>, number][] = [
          [`/v1/templates?api_key=${key}`, {}, 401],
          [`/v1/templates?API_KEY=${key}&limit=1`, auth, 400],
          [`/v1/templates?access_token=${key}`, auth, 400],
          [`/v1/templates?q=${key}`, auth, 200],
          [`/v1/templates?q=${key.replace('pp_', 'pp%5F')}`, auth, 200],
          [`/v1/templates?q=Bearer%20${key}`, auth, 200],
          [`/v1/templates/${key}`, auth, 404],
          [`/v1/templates/%FF/${key}?token=${key}`, auth, 400],
          [`/v1/templates/%FF?apikey=${key}`, auth, 400],
          [
            `/v1/endpoints?password=${secrets[0]}&client_secret=${secrets[1]}&token=${secrets[2]}&x-api-key=${secrets[3]}&session=${secrets[4]}`,
            auth,
            400,
          ],
        ];
        for (const [path, headers, status] of requests) {
          const r = await fetch(`${server.url}${path}`, { headers });
          assert.equal(r.status, status, path);
          await r.body?.cancel();
        }
        // A request Node's HTTP parser refuses (a NUL in a header) still gets a problem; its raw bytes are not logged.
        const refused = await raw(
          server.url,
          `GET /v1/templates?api_key=${key} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Odd: a\u0000b\r\n\r\n`,
        );
        await server.stop();

        const lines = server.stdout().split('\n').filter(Boolean);
        const logged = lines.map((line) => JSON.parse(line) as { url?: string; msg: string });
        const urls = logged.flatMap((entry) => (entry.msg === 'request' && entry.url ? [entry.url] : []));
        for (const line of lines) {
          assert.equal(line.includes(key.slice(3)), false, `a log line holds the key: ${line.slice(0, 300)}`);
          for (const secret of secrets) assert.equal(line.includes(secret), false, `a log line holds ${secret}: ${line.slice(0, 300)}`);
          assert.equal(/rawPacket|authorization/i.test(line), false, line.slice(0, 300));
        }
        // What a reader of the logs still sees: every request, and its URL but for the secrets.
        for (const url of [
          '/v1/templates?api_key=[redacted]',
          '/v1/templates?API_KEY=[redacted]&limit=1',
          '/v1/templates?access_token=[redacted]',
          '/v1/templates?q=pp_[redacted]',
          '/v1/templates?q=Bearer%20pp_[redacted]',
          '/v1/templates/pp_[redacted]',
          '/v1/templates/%FF/pp_[redacted]?token=[redacted]',
          '/v1/templates/%FF?apikey=[redacted]',
          '/v1/endpoints?password=[redacted]&client_secret=[redacted]&token=[redacted]&x-api-key=[redacted]&session=[redacted]',
        ]) {
          assert.ok(urls.includes(url), `${url} is logged; logged: ${urls.join(' ')}`);
        }
        assert.equal(urls.filter((u) => u === '/v1/templates?q=pp_[redacted]').length, 2, 'the percent-encoded "_" too');
        assert.match(refused, /^HTTP\/1\.1 400 Bad Request\r\n/);
        assert.match(refused, /\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/);
        assert.equal(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)).type, 'https://podplate.dev/problems/invalid-request');
      });
    });
});
