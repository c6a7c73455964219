import { ObjectId } from 'bson';
import {
  aggregate,
  applyUpdate,
  CommandError,
  type Doc,
  equalities,
  isPlain,
  keyOf,
  matches,
  num,
  project,
  sortDocs,
} from './mongo-query';

// In-memory databases of the MongoDB wire peer. Upserts by a key (what the connector's sink
// sends, one per record) look the key up in an equality index built on first use, so 100,000
// upserts stay linear.

type Index = { fields: string[]; entries: Map<string, Set<string>>; usable: boolean };

export class Collection {
  readonly docs = new Map<string, Doc>();
  private readonly indexes = new Map<string, Index>();

  constructor(
    readonly db: string,
    readonly name: string,
  ) {}

  private indexKey(index: Index, doc: Doc): string | null {
    const parts: string[] = [];
    for (const f of index.fields) {
      const v = doc[f];
      if (Array.isArray(v)) return null;
      parts.push(keyOf(v ?? null));
    }
    return parts.join('\u0000');
  }

  private addToIndexes(id: string, doc: Doc) {
    for (const index of this.indexes.values()) {
      const k = this.indexKey(index, doc);
      if (k === null) {
        index.usable = false;
        continue;
      }
      const set = index.entries.get(k) ?? new Set<string>();
      index.entries.set(k, set);
      set.add(id);
    }
  }

  private removeFromIndexes(id: string, doc: Doc) {
    for (const index of this.indexes.values()) {
      const k = this.indexKey(index, doc);
      if (k !== null) index.entries.get(k)?.delete(id);
    }
  }

  /** Documents that may match `filter`: an index lookup for pure top-level equalities. */
  private candidates(filter: Doc): Iterable<[string, Doc]> {
    const eq = equalities(filter);
    const fields = eq ? Object.keys(eq).sort() : [];
    if (!eq || fields.length === 0 || fields.some((f) => isPlain(eq[f]) || Array.isArray(eq[f])))
      return this.docs.entries();
    const name = fields.join(',');
    let index = this.indexes.get(name);
    if (!index) {
      index = { fields, entries: new Map(), usable: true };
      this.indexes.set(name, index);
      const built = index;
      for (const [id, doc] of this.docs) {
        const k = this.indexKey(built, doc);
        if (k === null) built.usable = false;
        else {
          const set = built.entries.get(k) ?? new Set<string>();
          built.entries.set(k, set);
          set.add(id);
        }
      }
    }
    if (!index.usable) return this.docs.entries();
    const ids = index.entries.get(fields.map((f) => keyOf(eq[f] ?? null)).join('\u0000')) ?? new Set();
    return [...ids].map((id) => [id, this.docs.get(id) as Doc] as [string, Doc]);
  }

  find(
    filter: Doc | undefined,
    opts: { projection?: Doc; sort?: Doc; skip?: number; limit?: number },
  ): Doc[] {
    let out: Doc[] = [];
    for (const [, doc] of this.candidates(filter ?? {})) if (matches(doc, filter)) out.push(doc);
    out = sortDocs(out, opts.sort);
    if (opts.skip) out = out.slice(opts.skip);
    if (opts.limit) out = out.slice(0, Math.abs(opts.limit));
    return opts.projection ? out.map((d) => project(d, opts.projection)) : out;
  }

  aggregate(pipeline: Doc[]): Doc[] {
    return aggregate([...this.docs.values()], pipeline);
  }

  insert(doc: Doc): void {
    // Like a real server: _id first, generated when missing. The command's documents are
    // fresh from the wire, so they are stored without a copy.
    const stored: Doc = { _id: doc._id === undefined ? new ObjectId() : doc._id, ...doc };
    if (stored._id === undefined) stored._id = new ObjectId();
    const id = keyOf(stored._id);
    if (this.docs.has(id)) {
      throw new CommandError(
        11000,
        'DuplicateKey',
        `E11000 duplicate key error collection: ${this.db}.${this.name} index: _id_ dup key: { _id: ${id.slice(2)} }`,
      );
    }
    this.docs.set(id, stored);
    this.addToIndexes(id, stored);
  }

  /** One update statement: {q, u, upsert, multi}. */
  update(
    q: Doc,
    u: Doc,
    upsert: boolean,
    multi: boolean,
  ): { n: number; modified: number; upserted?: unknown } {
    if (Array.isArray(u))
      throw new CommandError(9, 'FailedToParse', 'pipeline updates are not supported here');
    let n = 0;
    let modified = 0;
    for (const [id, doc] of [...this.candidates(q)]) {
      if (!matches(doc, q)) continue;
      n++;
      const next = applyUpdate(doc, u, false);
      next._id = doc._id;
      this.removeFromIndexes(id, doc);
      this.docs.set(id, next);
      this.addToIndexes(id, next);
      modified++;
      if (!multi) break;
    }
    if (n > 0 || !upsert) return { n, modified };
    const base = equalities(q) ?? {};
    const created = applyUpdate(base, u, true);
    if (created._id === undefined && base._id !== undefined) created._id = base._id;
    this.insert(created);
    return { n: 1, modified: 0, upserted: created._id };
  }

  delete(q: Doc, limit: number): number {
    let n = 0;
    for (const [id, doc] of [...this.candidates(q)]) {
      if (!matches(doc, q)) continue;
      this.removeFromIndexes(id, doc);
      this.docs.delete(id);
      n++;
      if (limit === 1) break;
    }
    return n;
  }
}

export class Store {
  private readonly dbs = new Map<string, Map<string, Collection>>();

  collections(db: string): Collection[] {
    return [...(this.dbs.get(db)?.values() ?? [])];
  }

  get(db: string, name: string, create: boolean): Collection | undefined {
    let colls = this.dbs.get(db);
    if (!colls) {
      if (!create) return undefined;
      colls = new Map();
      this.dbs.set(db, colls);
    }
    let c = colls.get(name);
    if (!c && create) {
      c = new Collection(db, name);
      colls.set(name, c);
    }
    return c;
  }

  drop(db: string, name?: string): boolean {
    if (name === undefined) return this.dbs.delete(db);
    return this.dbs.get(db)?.delete(name) ?? false;
  }
}

export { num };
