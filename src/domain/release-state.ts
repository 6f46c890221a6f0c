// A release's state in words, the same in the CLI and the web UI. Imports nothing: the UI's bundle takes it as it is.

interface ReleaseFacts {
  version: number;
  status: 'pending' | 'rolling' | 'completed' | 'failed' | 'superseded';
  workersUpdated: number;
  workersTotal: number;
}

/**
 * What a release is doing, as a person reads it. A pending release is one no orchestrator has acknowledged yet (it
 * reports `rolling` first); a superseded one names the release that replaced it, the next newer of `releases`.
 */
export function releaseState(release: ReleaseFacts, releases: readonly Pick<ReleaseFacts, 'version'>[]): string {
  switch (release.status) {
    case 'pending':
      return 'waiting for the platform to pick it up';
    case 'rolling':
      return `rolling out: ${release.workersUpdated} of ${release.workersTotal} workers`;
    case 'completed':
      return `completed: ${release.workersUpdated} of ${release.workersTotal} workers`;
    case 'failed':
      return `failed after ${release.workersUpdated} of ${release.workersTotal} workers`;
    case 'superseded': {
      const newer = releases.map((r) => r.version).filter((v) => v > release.version);
      return newer.length ? `superseded by release ${Math.min(...newer)}` : 'superseded';
    }
  }
}
