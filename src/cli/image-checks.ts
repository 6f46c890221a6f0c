import type { Command } from 'commander';
import { etagFlag, integerFlag, type OutputFlags, printData, withOutput } from './command.ts';
import { client } from './config.ts';
import { WatchError } from './endpoints.ts';
import { imageCheckText, out } from './output.ts';

// podplate templates check|repin: a template's image checked at its registry now, and its tag pinned again.

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

/** Checks the template's image now and waits for the result: exit 1 when it failed, for CI. */
async function check(id: string, flags: OutputFlags & { timeout?: string }): Promise<void> {
  const podplate = client();
  const timeout = integerFlag('timeout', flags.timeout) ?? 300;
  const deadline = Date.now() + timeout * 1000;
  let { value } = await podplate.checkTemplateImage(id);
  // Pending: another process's check of it is under way, or the registry is being asked again; wait for its end.
  while (value.imageCheck.status === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    ({ value } = await podplate.getTemplate(id, { includeEndpointBoundTemplates: true }));
  }
  if (!printData(value, flags)) out(`Image of template ${id}: ${imageCheckText(value.imageCheck)}`);
  if (value.imageCheck.status === 'failed') throw new WatchError(`the image check failed: ${value.imageCheck.reason ?? ''}`);
  if (value.imageCheck.status === 'pending') throw new WatchError(`the image check did not end within ${timeout} s`);
}

async function repin(id: string, flags: OutputFlags & { ifMatch?: string }): Promise<void> {
  const podplate = client();
  const { value: before } = await podplate.getTemplate(id, { includeEndpointBoundTemplates: true });
  const { value, etag } = await podplate.repinTemplate(id, { ifMatch: etagFlag(flags.ifMatch) });
  if (printData(value, flags)) return;
  if (value.revision === before.revision)
    out(`The tag of template ${id} still serves ${value.imageCheck.digest ?? 'the same image'}: no change.`);
  else
    out(
      `Repinned template ${id}: revision ${before.revision} → ${value.revision}, ETag ${etag}.\n  imageDigest: ${before.imageCheck.digest ?? '-'} → ${value.imageCheck.digest}`,
    );
}

/** The image commands of the `templates` group. */
export function imageCheckCommands(group: Command): void {
  withOutput(
    group
      .command('check')
      .description(
        "Check a template's image at its registry now and wait for the result (its status, digest, platforms, size, CUDA); " +
          'exit 1 when it failed, for CI.',
      )
      .argument('<template-id>')
      .option('--timeout <seconds>', 'how long to wait for a check under way (default 300)'),
  )
    .addHelpText(
      'after',
      examples('podplate templates check 5x2k9d0v7m3qh8wz', 'podplate templates check 5x2k9d0v7m3qh8wz -o json | jq .imageCheck'),
    )
    .action(check);

  withOutput(
    group
      .command('repin')
      .description(
        "Read the template's tag again: a new digest makes a new revision pinned to it (and a rolling release); the same digest changes nothing.",
      )
      .argument('<template-id>')
      .option('--if-match <etag>', 'only if the template is still at this ETag (r3 or "r3"); 412 otherwise'),
  )
    .addHelpText('after', examples('podplate templates repin 5x2k9d0v7m3qh8wz'))
    .action(repin);
}
