import { type Static, Type } from '@sinclair/typebox';

// Usage of a template, reported by the platform: runtime and credits earned, counted once per report.

export const UsageReport = Type.Object(
  {
    usageId: Type.String({
      pattern: '^[A-Za-z0-9._:-]{1,128}$',
      errorMessage: 'must be 1 to 128 letters, digits, ".", "_", ":" or "-"',
      description: 'Identifies the report: the same usageId is counted once.',
    }),
    runtimeInMin: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Minutes of runtime to add.' }),
    earned: Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Credits earned to add.' }),
  },
  { $id: 'UsageReport', title: 'UsageReport', additionalProperties: false },
);
export type UsageReport = Static<typeof UsageReport>;

/** A usage report as stored, against the template it counted for. */
export interface UsageRecord extends UsageReport {
  templateId: string;
  createdAt: string;
}

/** Two reports under one usageId that say different things: the second is refused, not counted. */
export const sameReport = (a: Omit<UsageRecord, 'createdAt'>, b: Omit<UsageRecord, 'createdAt'>): boolean =>
  a.templateId === b.templateId && a.runtimeInMin === b.runtimeInMin && a.earned === b.earned;
