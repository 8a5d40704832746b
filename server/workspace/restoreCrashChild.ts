/**
 * Test-only child process: runs one restore, applyChanges or recover and kills itself with
 * SIGKILL at a named fault step, so the crash tests can check recovery after real process death.
 * argv[2] is a JSON `{ root, journalDir, storeDir, step, restore?: ManifestFile[], changes?,
 * recover? }`, or `@<file>` naming a file that holds it (a 2,000-file manifest is over the
 * kernel's 128 KiB limit for one argument).
 */
import * as fs from 'node:fs';
import { ContentStore } from './contentStore.ts';
import type { ManifestFile } from './manifest.ts';
import { ProjectWorkspace, type WorkspaceChange } from './ProjectWorkspace.ts';

interface CrashJob {
  root: string;
  journalDir: string;
  storeDir: string;
  step: string;
  restore?: ManifestFile[];
  changes?: WorkspaceChange[];
  /** Run `recover()` (of an earlier interrupted change) instead of a change. */
  recover?: boolean;
}

const arg = process.argv[2] ?? '{}';
const job = JSON.parse(
  arg.startsWith('@') ? fs.readFileSync(arg.slice(1), 'utf8') : arg,
) as CrashJob;
const ws = new ProjectWorkspace({
  projectId: 'p1',
  root: job.root,
  contentStore: new ContentStore(job.storeDir),
  journalDir: job.journalDir,
  faultInjector: (step) => {
    if (step === job.step) process.kill(process.pid, 'SIGKILL');
  },
});
if (job.recover) ws.recover();
else if (job.restore) ws.restore(job.restore);
else ws.applyChanges(job.changes ?? []);
