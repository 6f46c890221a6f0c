import type { DumpTable } from '../store/dump/dump.ts';
import { InvalidExport } from './format.ts';

// What the database's foreign keys don't hold, checked as an import reads the rows: a template names only its own
// owner's registry auth, and a template and its endpoint name each other and have one owner. A hostile or damaged
// stream could otherwise have Bob's template pull with Alice's registry credentials, or leave a template bound to an
// endpoint that does not exist (undeletable) or an endpoint running a template that is not bound to it.
//
// The tables come in DUMP_TABLES order (templates, then endpoints, ..., then registry_auths), so a reference is
// remembered until the row it names arrives. Only rows that refer to something are remembered: a template's
// registry auth once per (auth, owner), a bound template once per endpoint.

interface Binding {
  templateId: string;
  ownerId: string;
  line: number;
}

const column = (table: DumpTable, name: string): number => {
  const at = table.columns.indexOf(name);
  if (at < 0) throw new Error(`${table.name} has no column ${name}`);
  return at;
};

export class References {
  /** Registry auth id → owner of a template naming it → the line of the first such template. */
  private readonly authUsers = new Map<string, Map<string, number>>();
  /** Endpoint id → the template bound to it. */
  private readonly bindings = new Map<string, Binding>();

  /** Checks a row (already of the right kinds) at `line`; InvalidExport names what is wrong. */
  row(table: DumpTable, values: unknown[], line: number): void {
    const value = (name: string) => values[column(table, name)];
    if (table.name === 'templates') {
      const id = value('id') as string;
      const ownerId = value('owner_id') as string;
      const authId = value('container_registry_auth_id') as string;
      if (authId !== '') {
        const owners = this.authUsers.get(authId) ?? new Map<string, number>();
        if (!owners.has(ownerId)) owners.set(ownerId, line);
        this.authUsers.set(authId, owners);
      }
      const endpointId = value('endpoint_id') as string | null;
      if (endpointId !== null) {
        const other = this.bindings.get(endpointId);
        if (other) {
          throw new InvalidExport(
            line,
            `template ${id} is bound to endpoint ${endpointId}, as template ${other.templateId} (line ${other.line}) is`,
          );
        }
        this.bindings.set(endpointId, { templateId: id, ownerId, line });
      }
    } else if (table.name === 'endpoints') {
      const id = value('id') as string;
      const binding = this.bindings.get(id);
      const templateId = value('template_id') as string;
      if (!binding || binding.templateId !== templateId) {
        throw new InvalidExport(
          line,
          `endpoint ${id} runs template ${templateId}, which is not bound to it (its endpoint_id must be ${id})`,
        );
      }
      if (binding.ownerId !== value('owner_id')) {
        throw new InvalidExport(line, `endpoint ${id} and its template ${templateId} (line ${binding.line}) have different owners`);
      }
      this.bindings.delete(id);
    } else if (table.name === 'registry_auths') {
      const owners = this.authUsers.get(value('id') as string);
      if (!owners) return;
      for (const [ownerId, templateLine] of owners) {
        if (ownerId !== value('owner_id')) {
          throw new InvalidExport(
            templateLine,
            `the template names registry auth ${value('id') as string} (line ${line}), which belongs to another account`,
          );
        }
      }
    }
  }

  /** At the end line: a bound template whose endpoint never came is named. */
  done(): void {
    for (const [endpointId, binding] of this.bindings) {
      throw new InvalidExport(
        binding.line,
        `template ${binding.templateId} is bound to endpoint ${endpointId}, which the stream does not hold`,
      );
    }
  }
}
