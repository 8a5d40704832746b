/**
 * Test-only child process: runs one restore or applyChanges and kills itself with SIGKILL at a
 * named fault step, so ProjectWorkspace.crash.test.ts can check recovery after real process death.
 * argv[2] is a JSON `{ root, journalDir, storeDir, step, restore?: ManifestFile[], changes? }`.
 */
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
}

const job = JSON.parse(process.argv[2] ?? '{}') as CrashJob;
const ws = new ProjectWorkspace({
  projectId: 'p1',
  root: job.root,
  contentStore: new ContentStore(job.storeDir),
  journalDir: job.journalDir,
  faultInjector: (step) => {
    if (step === job.step) process.kill(process.pid, 'SIGKILL');
  },
});
if (job.restore) ws.restore(job.restore);
else ws.applyChanges(job.changes ?? []);
