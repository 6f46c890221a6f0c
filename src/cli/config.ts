import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import { createPodplateClient, isHttpUrl, type PodplateClient, serviceUrl } from '../client/index.ts';
import { writePrivately } from '../private-files.ts';

// Where the client commands find the service and their key: PODPLATE_URL / PODPLATE_API_KEY, else the file
// `podplate login` wrote ($XDG_CONFIG_HOME/podplate/config.json, readable by its owner only).

export interface Connection {
  url: string;
  apiKey: string;
}

/** A problem with the saved login or its file: exit 1 with the message. */
export class LoginError extends Error {}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'podplate', 'config.json');
}

export function readSaved(path = configPath()): Partial<Connection> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return {};
    throw new LoginError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const saved = JSON.parse(text) as Partial<Connection>;
    return {
      ...(typeof saved.url === 'string' ? { url: saved.url } : {}),
      ...(typeof saved.apiKey === 'string' ? { apiKey: saved.apiKey } : {}),
    };
  } catch {
    throw new LoginError(`${path} is not valid JSON: run podplate login again`);
  }
}

/** Saves the login: the directory 0700, the file 0600 (private-files.ts), replaced at once so a reader never sees half of it. */
export async function save(connection: Connection, path = configPath()): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  const text = `${JSON.stringify({ url: connection.url, apiKey: connection.apiKey }, null, 2)}\n`;
  await writePrivately(path, async ({ stream }) => void stream().write(text), { replace: true });
}

export function forget(path = configPath()): boolean {
  try {
    rmSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The service and key to use: the environment overrides the saved login, field by field. */
export function connection(env: NodeJS.ProcessEnv = process.env): Connection {
  const saved = readSaved(configPath(env));
  const url = env.PODPLATE_URL || saved.url;
  if (url && !isHttpUrl(url)) {
    throw new LoginError(
      `${env.PODPLATE_URL ? 'PODPLATE_URL' : `the URL saved in ${configPath(env)}`} is not an http(s) URL: ${JSON.stringify(url)}`,
    );
  }
  // The saved key goes only to the service it was saved for: another PODPLATE_URL needs its own PODPLATE_API_KEY.
  if (env.PODPLATE_URL && !env.PODPLATE_API_KEY && saved.apiKey && saved.url && serviceUrl(env.PODPLATE_URL) !== serviceUrl(saved.url)) {
    throw new LoginError(
      `PODPLATE_URL (${env.PODPLATE_URL}) is not the service the saved key is for (${saved.url}): set PODPLATE_API_KEY too, or log in to it`,
    );
  }
  const apiKey = env.PODPLATE_API_KEY || saved.apiKey;
  if (!url || !apiKey)
    throw new LoginError(
      `not logged in: run podplate login --url <url> --api-key <key>, or set PODPLATE_URL and PODPLATE_API_KEY (missing ${!url ? 'the URL' : 'the API key'})`,
    );
  if (!/^[\x21-\x7e]{1,512}$/.test(apiKey)) {
    throw new LoginError(
      `the API key ${env.PODPLATE_API_KEY ? 'in PODPLATE_API_KEY' : 'saved'} is not a key: it has spaces or characters no key has`,
    );
  }
  return { url: serviceUrl(url), apiKey };
}

/** The typed client for the service and key in use. */
export function client(env: NodeJS.ProcessEnv = process.env): PodplateClient {
  return createPodplateClient({ ...connection(env), userAgent: `podplate-cli/${pkg.version}` });
}
