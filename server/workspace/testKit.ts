import * as fs from 'node:fs';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import { ContentStore } from './contentStore.ts';
import { ProjectWorkspace } from './ProjectWorkspace.ts';

/** Test-only: a real temp data dir and project folder, cleaned up by `dispose`. */
export interface TempEnv {
  base: string;
  root: string;
  journalDir: string;
  store: ContentStore;
  workspace(faultInjector?: (step: string) => void): ProjectWorkspace;
  dispose(): void;
}

export function makeTempEnv(projectId = 'p1'): TempEnv {
  const base = fs.mkdtempSync(join(os.tmpdir(), 'studio-ws-'));
  const root = join(base, 'project');
  const journalDir = join(base, 'data', 'journal');
  const store = new ContentStore(join(base, 'data', 'blobs'));
  return {
    base,
    root,
    journalDir,
    store,
    workspace: (faultInjector) =>
      new ProjectWorkspace({ projectId, root, contentStore: store, journalDir, faultInjector }),
    dispose: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/** Writes `files` (relative path -> content) under `root`, creating directories. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    const abs = join(root, ...path.split('/'));
    fs.mkdirSync(dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

/** Every entry under `root` (files as content, directories as '<dir>'), for exact comparisons. */
export function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (abs: string, rel: string): void => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = join(abs, entry.name);
      if (entry.isDirectory()) {
        out[childRel] = '<dir>';
        visit(childAbs, childRel);
      } else if (entry.isSymbolicLink()) out[childRel] = `<link ${fs.readlinkSync(childAbs)}>`;
      else out[childRel] = fs.readFileSync(childAbs, 'utf8');
    }
  };
  if (fs.existsSync(root)) visit(root, '');
  return out;
}
