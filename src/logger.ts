import pino, { type Logger } from 'pino';

// The process's log: one JSON object a line on stdout (pino), pretty-printed (pino-pretty) only when stdout is a
// terminal. Every line the server writes goes through it, from the first (a bad setting) to the last (shutting down).

export type { Logger };

/** The logger of a process at `level`: JSON lines, or pretty ones on a terminal. */
export async function processLogger(level: string): Promise<Logger> {
  if (process.stdout.isTTY) {
    const { default: pretty } = await import('pino-pretty');
    return pino({ level }, pretty({ sync: true, destination: 1 }));
  }
  return pino({ level });
}

/** LOG_LEVEL as pino takes it, before the settings are checked (a bad one is reported through a logger at `info`). */
export const levelFrom = (env: NodeJS.ProcessEnv): string =>
  env.LOG_LEVEL && Object.hasOwn(pino.levels.values, env.LOG_LEVEL) ? env.LOG_LEVEL : env.LOG_LEVEL === 'silent' ? 'silent' : 'info';
