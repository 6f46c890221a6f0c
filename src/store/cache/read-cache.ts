import { LRUCache } from 'lru-cache';
import type { Principal } from '../../domain/account.ts';
import type { TemplateView } from '../../domain/template.ts';
import { parseChange } from './change-names.ts';

// The store's read cache: the served view of each template and the caller each key stands for, kept in this
// process and made stale by the database itself (store/changes.ts), so that any writer invalidates. Only what was
// read is cached (never a miss), each cache is bounded, and while the process can't hear the database's changes it
// trusts nothing it holds: it reads through until it can again (docs/performance.md, "The read cache").

export interface CacheOptions {
  /** Bytes of template views held at most (their text plus a measured overhead each); 0 turns the cache off. */
  maxBytes: number;
  /** Keys (callers) held at most. */
  maxKeys: number;
}

export const DEFAULT_CACHE: CacheOptions = { maxBytes: 32 * 1024 * 1024, maxKeys: 10_000 };

/**
 * Bytes a cached view holds beyond its text's length: the entry's object, its key, its place in the LRU's arrays,
 * measured with 100,000 entries of the benchmark's template (docs/performance.md). The text counts one byte a
 * character, as V8 stores ASCII text; a template with other characters holds up to twice what is counted.
 */
export const VIEW_OVERHEAD_BYTES = 400;

/** One cache's figures, as /metrics shows them. */
export interface CacheCounts {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
  /** Views: the bytes counted against the bound; keys: the entries. */
  size: number;
}

export interface CacheFigures {
  /** Whether the cache is being used: the process hears the database's changes (and the cache is on). */
  trusted: boolean;
  /** Times the whole cache was dropped: the change signal was lost or regained, or a change named everything. */
  flushes: number;
  /** Changes heard (each names one template, key, account, or everything). */
  changes: number;
  views: CacheCounts;
  keys: CacheCounts;
}

interface Counts {
  hits: number;
  misses: number;
  evictions: number;
}

export class ReadCache {
  private readonly views?: LRUCache<string, TemplateView>;
  private readonly principals?: LRUCache<string, Principal>;
  private readonly viewCounts: Counts = { hits: 0, misses: 0, evictions: 0 };
  private readonly keyCounts: Counts = { hits: 0, misses: 0, evictions: 0 };
  /** Moves with every change heard: a value read before a change and arriving after it is not kept. */
  private epoch = 0;
  private trust = false;
  private flushes = 0;
  private changes = 0;
  /**
   * Asked before each lookup: whether the cache may answer this one. SQLite's change watch reads the database's
   * change signal here; false when another connection wrote and which rows can't be read right now.
   */
  current: () => boolean = () => true;

  readonly options: CacheOptions;

  constructor(options: CacheOptions = { maxBytes: 0, maxKeys: 0 }) {
    this.options = options;
    const evicted = (counts: Counts) => (_value: unknown, _key: string, reason: LRUCache.DisposeReason) => {
      if (reason === 'evict') counts.evictions++;
    };
    if (options.maxBytes > 0) {
      this.views = new LRUCache<string, TemplateView>({
        maxSize: options.maxBytes,
        // One large template can't push out the others: none larger than a sixteenth of the cache is kept.
        maxEntrySize: Math.max(1, Math.floor(options.maxBytes / 16)),
        sizeCalculation: (view) => view.json.length + VIEW_OVERHEAD_BYTES,
        dispose: evicted(this.viewCounts),
      });
    }
    if (options.maxKeys > 0) this.principals = new LRUCache<string, Principal>({ max: options.maxKeys, dispose: evicted(this.keyCounts) });
  }

  get trusted(): boolean {
    return this.trust;
  }

  /** Trusts the cache from now on (the change signal is heard), or stops trusting it; either way it starts empty. */
  setTrusted(trusted: boolean): void {
    this.flush();
    this.trust = trusted;
  }

  view(id: string, read: () => Promise<TemplateView | undefined>): Promise<TemplateView | undefined> {
    return this.through(this.views, this.viewCounts, id, read);
  }

  principal(digest: string, read: () => Promise<Principal | undefined>): Promise<Principal | undefined> {
    return this.through(this.principals, this.keyCounts, digest, read);
  }

  /** A change the database announced (change-names.ts), whoever made it: what it names is read again. */
  forget(name: string): void {
    this.epoch++;
    this.changes++;
    const change = parseChange(name);
    switch (change.kind) {
      case 'template':
        this.views?.delete(change.id);
        return;
      case 'key':
        this.principals?.delete(change.digest);
        return;
      case 'account':
        this.principals?.clear();
        return;
      case 'everything':
        this.flush();
        return;
      default:
        change satisfies never;
    }
  }

  flush(): void {
    this.epoch++;
    this.flushes++;
    this.views?.clear();
    this.principals?.clear();
  }

  figures(): CacheFigures {
    const counts = (entries: number | undefined, counts: Counts, size: number): CacheCounts => ({ ...counts, entries: entries ?? 0, size });
    return {
      trusted: this.trust && this.views !== undefined,
      flushes: this.flushes,
      changes: this.changes,
      views: counts(this.views?.size, this.viewCounts, this.views?.calculatedSize ?? 0),
      keys: counts(this.principals?.size, this.keyCounts, this.principals?.size ?? 0),
    };
  }

  private async through<V extends object>(
    cache: LRUCache<string, V> | undefined,
    counts: Counts,
    key: string,
    read: () => Promise<V | undefined>,
  ): Promise<V | undefined> {
    if (!cache || !this.trust || !this.current()) return read();
    const hit = cache.get(key);
    if (hit !== undefined) {
      counts.hits++;
      return hit;
    }
    counts.misses++;
    const epoch = this.epoch;
    const value = await read();
    // A change heard while reading may have come after what was read: the value is served, not kept.
    if (value !== undefined && this.trust && epoch === this.epoch) cache.set(key, value);
    return value;
  }
}
