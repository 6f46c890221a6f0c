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
  // Written in blocks of 4 KiB or every 250 ms, whichever comes first, and whole at exit: a write per request line cost a
  // GET a sixth of its CPU (docs/performance.md). A process killed with SIGKILL loses at most that block.
  return pino({ level }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS }));
}

/** The longest a line waits in the log's buffer before it is written. */
export const LOG_FLUSH_MS = 250;

/** LOG_LEVEL as pino takes it, before the settings are checked (a bad one is reported through a logger at `info`). */
export const levelFrom = (env: NodeJS.ProcessEnv): string =>
  env.LOG_LEVEL && Object.hasOwn(pino.levels.values, env.LOG_LEVEL) ? env.LOG_LEVEL : env.LOG_LEVEL === 'silent' ? 'silent' : 'info';
