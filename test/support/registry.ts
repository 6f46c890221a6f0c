import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes, sign, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import bcrypt from 'bcryptjs';
import { freePort } from './process.ts';

// Real registries for the image check's tests: Debian's CNCF distribution registry (`docker-registry`) on loopback,
// open, behind htpasswd Basic auth, or behind token auth with a token server of our own (JWTs signed with a key made
// here, its certificate the registry's rootcertbundle). Test images are built here as blobs and manifests and pushed
// over the registry's API: no container engine.

export const REGISTRY_BIN = '/usr/bin/docker-registry';
export const USERNAME = 'tester';
export const PASSWORD = 'right-password';

export type RegistryAuth = 'none' | 'basic' | 'token';

export interface Blob {
  mediaType: string;
  bytes: Buffer;
  digest: string;
}

const blobOf = (mediaType: string, bytes: Buffer): Blob => ({
  mediaType,
  bytes,
  digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
});

/** One image (a manifest and its blobs), or an index of several. */
export interface TestImage {
  manifest: Blob;
  blobs: Blob[];
  /** The platform images an index lists, pushed before it. */
  children: TestImage[];
}

/** A tar archive holding one small file (ustar, by hand: the layer only has to be one). */
function tarOf(name: string, content: string): Buffer {
  const data = Buffer.from(content);
  const header = Buffer.alloc(512);
  const field = (offset: number, length: number, value: string) => header.write(value, offset, length, 'ascii');
  field(0, 100, name);
  field(100, 8, '0000644\0');
  field(108, 8, '0000000\0');
  field(116, 8, '0000000\0');
  field(124, 12, `${data.length.toString(8).padStart(11, '0')}\0`);
  field(136, 12, '00000000000\0');
  field(156, 1, '0');
  field(257, 6, 'ustar\0');
  field(263, 2, '00');
  header.fill(' ', 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  const padded = Buffer.alloc(Math.ceil(data.length / 512) * 512);
  data.copy(padded);
  return Buffer.concat([header, padded, Buffer.alloc(1024)]);
}

export interface ImageSpec {
  platform?: string;
  env?: string[];
  labels?: Record<string, string>;
  /** The layer's size as the manifest declares it (a large image without its bytes); its real size otherwise. */
  declaredLayerSize?: number;
  /** Makes the image's content (and so its digest) differ from another built alike. */
  marker?: string;
}

/** A single-platform OCI image: a config (env, labels) and one gzipped layer. */
export function image(spec: ImageSpec = {}): TestImage {
  const [os, architecture, variant] = (spec.platform ?? 'linux/amd64').split('/');
  const layer = blobOf('application/vnd.oci.image.layer.v1.tar+gzip', gzipSync(tarOf('hello.txt', `podplate ${spec.marker ?? ''}\n`)));
  const diffId = `sha256:${createHash('sha256')
    .update(tarOf('hello.txt', `podplate ${spec.marker ?? ''}\n`))
    .digest('hex')}`;
  const config = blobOf(
    'application/vnd.oci.image.config.v1+json',
    Buffer.from(
      JSON.stringify({
        architecture,
        os,
        ...(variant ? { variant } : {}),
        config: { Env: spec.env ?? ['PATH=/usr/bin'], Labels: spec.labels ?? {} },
        rootfs: { type: 'layers', diff_ids: [diffId] },
      }),
    ),
  );
  const manifest = blobOf(
    'application/vnd.oci.image.manifest.v1+json',
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: config.mediaType, digest: config.digest, size: config.bytes.length },
        layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: spec.declaredLayerSize ?? layer.bytes.length }],
      }),
    ),
  );
  return { manifest, blobs: [config, layer], children: [] };
}

/** An OCI index of one image per platform. */
export function index(specs: ImageSpec[]): TestImage {
  const children = specs.map((spec) => image(spec));
  const manifest = blobOf(
    'application/vnd.oci.image.index.v1+json',
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: children.map((child, i) => {
          const [os, architecture, variant] = (specs[i]?.platform ?? 'linux/amd64').split('/');
          return {
            mediaType: child.manifest.mediaType,
            digest: child.manifest.digest,
            size: child.manifest.bytes.length,
            platform: { os, architecture, ...(variant ? { variant } : {}) },
          };
        }),
      }),
    ),
  );
  return { manifest, blobs: [], children };
}

/** A token server of the tests' own: JWTs for the distribution registry, signed with ES256 under a certificate made here. */
class TokenServer {
  readonly issuer = 'podplate-test-issuer';
  readonly service = 'podplate-test-registry';
  private server: Server | undefined;
  private readonly key: string;
  private readonly certificate: X509Certificate;
  url = '';
  /** Token requests answered, with whether they carried the right credentials. */
  readonly requests: { authorized: boolean; scope: string }[] = [];

  constructor(dir: string) {
    const keyFile = join(dir, 'token.key');
    const certFile = join(dir, 'token.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '2',
        '-subj',
        '/CN=podplate-test-token',
      ],
      { stdio: 'ignore' },
    );
    this.key = readFileSync(keyFile, 'utf8');
    this.certificate = new X509Certificate(readFileSync(certFile));
  }

  get certFile(): string {
    return this.certificate.toString();
  }

  /** A token for `scope` ("repository:name:pull,push"). */
  token(scope: string): string {
    const [type, name, actions] = scope.split(':');
    const now = Math.floor(Date.now() / 1000);
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const header = part({ alg: 'ES256', typ: 'JWT', x5c: [this.certificate.raw.toString('base64')] });
    const claims = part({
      iss: this.issuer,
      sub: USERNAME,
      aud: this.service,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomBytes(8).toString('hex'),
      access: type && name ? [{ type, name, actions: (actions ?? '').split(',').filter(Boolean) }] : [],
    });
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key: this.key, dsaEncoding: 'ieee-p1363' });
    return `${header}.${claims}.${signature.toString('base64url')}`;
  }

  async start(): Promise<void> {
    const right = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;
    this.server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const authorized = request.headers.authorization === right;
      const scope = url.searchParams.get('scope') ?? '';
      this.requests.push({ authorized, scope });
      if (!authorized) {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"these words must never reach a check reason"}');
        return;
      }
      const token = this.token(scope);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, expires_in: 300 }));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/token`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

export interface TestRegistry {
  /** host:port, on 127.0.0.1. */
  host: string;
  auth: RegistryAuth;
  /** Every host the check reaches: the registry's, and its token server's (for IMAGE_CHECK_INSECURE_REGISTRIES). */
  hosts: string[];
  /** The token server's requests, with token auth. */
  tokenRequests: { authorized: boolean; scope: string }[];
  /** Pushes `image` as `repository:tag`; its digest. */
  push(repository: string, tag: string, image: TestImage): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a registry on a free loopback port, waiting until it answers. */
export async function startRegistry(auth: RegistryAuth = 'none'): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  let tokens: TokenServer | undefined;
  let authConfig = '';
  if (auth === 'basic') {
    writeFileSync(join(dir, 'htpasswd'), `${USERNAME}:${bcrypt.hashSync(PASSWORD, 5)}\n`);
    authConfig = `auth:\n  htpasswd:\n    realm: podplate-test\n    path: ${join(dir, 'htpasswd')}\n`;
  } else if (auth === 'token') {
    tokens = new TokenServer(dir);
    await tokens.start();
    writeFileSync(join(dir, 'token-cert.pem'), tokens.certFile);
    authConfig =
      `auth:\n  token:\n    realm: ${tokens.url}\n    service: ${tokens.service}\n    issuer: ${tokens.issuer}\n` +
      `    rootcertbundle: ${join(dir, 'token-cert.pem')}\n`;
  }
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n` +
      `  delete:\n    enabled: true\nhttp:\n  addr: ${host}\n  secret: ${randomBytes(16).toString('hex')}\n${authConfig}`,
  );
  const child: ChildProcess = spawn(REGISTRY_BIN, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (d) => {
    errors += d;
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited (${child.exitCode}): ${errors}`);
    const answered = await fetch(`http://${host}/v2/`).then(
      (r) => r.status,
      () => 0,
    );
    if (answered === 200 || answered === 401) break;
    if (Date.now() > deadline) throw new Error(`docker-registry did not answer on ${host}: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const authorization = (scope: string): Record<string, string> => {
    if (auth === 'basic') return { authorization: `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}` };
    if (auth === 'token' && tokens) return { authorization: `Bearer ${tokens.token(scope)}` };
    return {};
  };
  const call = async (method: string, path: string, repository: string, body?: Buffer, headers: Record<string, string> = {}) => {
    const response = await fetch(path.startsWith('http') ? path : `http://${host}${path}`, {
      method,
      headers: { ...authorization(`repository:${repository}:pull,push`), ...headers },
      body: body && new Uint8Array(body),
      redirect: 'manual',
    });
    if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  const pushBlob = async (repository: string, blob: Blob) => {
    const started = await call('POST', `/v2/${repository}/blobs/uploads/`, repository);
    const location = new URL(started.headers.get('location') as string, `http://${host}`);
    location.searchParams.set('digest', blob.digest);
    await call('PUT', location.toString(), repository, blob.bytes, { 'content-type': 'application/octet-stream' });
  };
  const pushImage = async (repository: string, reference: string, image: TestImage): Promise<void> => {
    for (const child of image.children) await pushImage(repository, child.manifest.digest, child);
    for (const blob of image.blobs) await pushBlob(repository, blob);
    await call('PUT', `/v2/${repository}/manifests/${reference}`, repository, image.manifest.bytes, {
      'content-type': image.manifest.mediaType,
    });
  };
  return {
    host,
    auth,
    hosts: tokens ? [host, new URL(tokens.url).host] : [host],
    tokenRequests: tokens?.requests ?? [],
    push: async (repository, tag, image) => {
      await pushImage(repository, tag, image);
      return image.manifest.digest;
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      await tokens?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
