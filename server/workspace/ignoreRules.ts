import * as fs from 'node:fs';
import ignore, { type Ignore } from 'ignore';

/**
 * A project's own capture patterns, in `.gitignore` syntax, applied after every ignore file (so
 * they win): `exclude` leaves matching paths out, `include` brings back paths an ignore file left
 * out. As in git, a path inside a directory that is left out cannot be brought back unless the
 * directory itself is (`include: ['build/']` brings back the whole `build/` folder).
 */
export interface CapturePatterns {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** One ignore file (or the project's patterns), matched against paths relative to `base`. */
export interface IgnoreLayer {
  /** Changes whenever the rules change, so cached decisions made under other rules are dropped. */
  readonly id: number;
  /** Relative directory the patterns are written against ('' for the project root). */
  readonly base: string;
  readonly rules: Ignore;
}

let nextLayerId = 1;

/** Builds a layer from pattern text; `base` is the directory holding the ignore file. */
export function makeLayer(base: string, text: string): IgnoreLayer {
  return { id: nextLayerId++, base, rules: ignore({ allowRelativePaths: true }).add(text) };
}

/** The project patterns as one layer (excludes first, then the includes as `!pattern`). */
export function projectLayer(patterns: CapturePatterns): IgnoreLayer | null {
  const lines = [
    ...(patterns.exclude ?? []),
    ...(patterns.include ?? []).map((p) => (p.startsWith('!') ? p.slice(1) : `!${p}`)),
  ];
  return lines.length ? makeLayer('', lines.join('\n')) : null;
}

/**
 * Decides a path with git's precedence: layers are given lowest priority first
 * (`.git/info/exclude`, then `.gitignore` files from the root down, then the project's
 * patterns); the last layer with an opinion wins. `dir` marks a directory (matched with a
 * trailing `/`, so `node_modules/` patterns apply).
 */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, dir: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const local = layer.base ? rel.slice(layer.base.length + 1) : rel;
    const r = layer.rules.checkIgnore(dir ? `${local}/` : local);
    // A directory-only pattern (`build/`) matches a file only through its folder, which the walk
    // already decided on (it does not enter a left-out folder); as git, it says nothing of files.
    if (!dir && r.rule?.pattern.endsWith('/')) continue;
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Ignore files read once and reused while their stat (size, mtime, inode) is unchanged, so a
 * rescan neither re-reads them nor loses the decisions cached under them.
 */
export class IgnoreFileCache {
  private readonly layers = new Map<string, { key: string; layer: IgnoreLayer }>();

  /** The layer of the ignore file at `abs` (null when it is not a readable regular file). */
  layerFor(abs: string, base: string): IgnoreLayer | null {
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    if (!st?.isFile()) {
      this.layers.delete(abs);
      return null;
    }
    const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
    const hit = this.layers.get(abs);
    if (hit && hit.key === key) return hit.layer;
    const layer = makeLayer(base, fs.readFileSync(abs, 'utf8'));
    this.layers.set(abs, { key, layer });
    return layer;
  }
}
