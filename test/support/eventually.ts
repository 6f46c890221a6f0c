/**
 * Asks `probe` again and again until it answers true, for at most `withinMs`: a bound on staleness, not a speed
 * assertion. Resolves with how long it took; rejects, with `what` and the last answer, once the bound has passed.
 */
export async function eventually(what: string, withinMs: number, probe: () => Promise<boolean | { ok: boolean; seen: unknown }>) {
  const started = performance.now();
  let seen: unknown;
  for (;;) {
    const answer = await probe();
    const ok = typeof answer === 'boolean' ? answer : answer.ok;
    if (typeof answer !== 'boolean') seen = answer.seen;
    const took = performance.now() - started;
    if (ok) return took;
    if (took > withinMs) throw new Error(`${what}: not within ${withinMs} ms (last seen: ${JSON.stringify(seen)})`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
