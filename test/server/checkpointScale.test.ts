/**
 * Checkpoints of an ordinary repository-sized folder over the real server (issue 8), and a folder
 * the workspace cannot take, which must not stop the studio (issue 7, item 4).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  keepAlive,
  key,
  makeClient,
  makeTempDir,
  ok,
  startHarness,
  waitForEvent,
} from './harness.ts';
import type { ApprovalData, Attachment, CheckpointData, Harness, StudioClient } from './harness.ts';

const FILES = 2000;
let h: Harness;
let c: StudioClient;
let big: string;

/** Every entry under a folder, with link targets and the execute bit, for exact comparisons. */
function snapshotTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (abs: string, rel: string) => {
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const a = join(abs, e.name);
      if (e.isDirectory()) visit(a, r);
      else if (e.isSymbolicLink()) out[r] = `<link ${fs.readlinkSync(a)}>`;
      else out[r] = `${fs.statSync(a).mode & 0o100 ? 'x ' : ''}${fs.readFileSync(a, 'utf8')}`;
    }
  };
  visit(root, '');
  return out;
}

beforeAll(async () => {
  const dataDir = makeTempDir();
  big = join(dataDir, 'projects', 'sample-app');
  fs.mkdirSync(join(big, 'node_modules', 'dep'), { recursive: true });
  fs.writeFileSync(join(big, '.gitignore'), 'node_modules/\n');
  fs.writeFileSync(join(big, 'node_modules', 'dep', 'index.js'), 'ignored');
  for (let i = 0; i < FILES; i++) {
    const dir = join(big, 'src', `d${i % 20}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      join(dir, `f${String(i).padStart(4, '0')}.ts`),
      `export const v${i} = ${i};\n`,
    );
  }
  fs.writeFileSync(join(big, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(join(big, 'empty.txt'), '');
  fs.symlinkSync('src/d0/f0000.ts', join(big, 'link.ts'));
  // The other demo project holds a name no manifest can hold: that project only is unavailable.
  const odd = join(dataDir, 'projects', 'cleanup-app');
  fs.mkdirSync(odd, { recursive: true });
  fs.writeFileSync(join(odd, 'bad\nname.txt'), 'x');
  h = await startHarness({ dataDir });
  c = makeClient(h);
}, 60_000);

afterAll(async () => {
  await h.dispose();
});

const PROJECT_PAGE = `query P($sessionId: String!, $after: String, $prefix: String) {
  studioProject(sessionId: $sessionId) {
    contentHash fileCount available unavailableReason
    page: files(first: 500, after: $after, pathPrefix: $prefix) {
      totalCount pageInfo { hasNextPage endCursor } edges { node { path kind executable } }
    }
  }
}`;

interface ProjectPage {
  contentHash: string;
  fileCount: number;
  available: boolean;
  unavailableReason: string | null;
  page: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { node: { path: string; kind: string; executable: boolean } }[];
  };
}

async function projectPage(
  sessionId: string,
  after: string | null = null,
  prefix: string | null = null,
) {
  return (await ok<{ studioProject: ProjectPage }>(c, PROJECT_PAGE, { sessionId, after, prefix }))
    .studioProject;
}

const CHECKPOINT_EVENT = `query H($sessionId: String!) {
  crowdyStudioAgentHistory(sessionId: $sessionId, first: 500) {
    edges { node { ... on AgentCheckpointEvent { type checkpointId files { path }
      studioFilesOmitted studioFilesRemoved studioFileCount } } }
  }
}`;

const CHANGES = `query C($id: String!) {
  studioCheckpoint(checkpointId: $id) {
    changes(against: null, first: 50) {
      totalCount added changed removed changedOutsideAgent
      edges { node { path change changedOutsideAgent } }
    }
  }
}`;

async function session(projectId: string): Promise<{ a: Attachment; stop: () => void }> {
  const s = await createSession(c, 'BUILD', projectId);
  const a = await attach(c, s.sessionId);
  return { a, stop: keepAlive(c, a) };
}

const CREATE = `mutation Checkpoint($input: StudioCreateCheckpointInput!) {
  studioCreateCheckpoint(input: $input) { checkpointId contentHash fileCount }
}`;

async function checkpointNow(a: Attachment): Promise<CheckpointData> {
  return (
    await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE, {
      input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
    })
  ).studioCreateCheckpoint;
}

async function checkpointEvents(sessionId: string) {
  const data = await ok<{
    crowdyStudioAgentHistory: {
      edges: {
        node: {
          type?: string;
          checkpointId?: string;
          files?: { path: string }[];
          studioFilesOmitted?: number;
          studioFileCount?: number;
        };
      }[];
    };
  }>(c, CHECKPOINT_EVENT, { sessionId });
  return data.crowdyStudioAgentHistory.edges
    .map((e) => e.node)
    .filter((n) => n.type === 'CHECKPOINT_CREATED');
}

describe('a project folder the workspace cannot take', () => {
  it('is unavailable with its reason, in the studio and the log, and the server serves the rest', async () => {
    const { a, stop } = await session('cleanup-app');
    try {
      const p = await projectPage(a.sessionId);
      expect(p.available).toBe(false);
      expect(p.unavailableReason).toMatch(/control character/);
      expect(p.page.edges).toEqual([]);
      expect(
        h.logs.some((l) => l.includes('project unavailable') && l.includes('cleanup-app')),
      ).toBe(true);
    } finally {
      stop();
    }
  });
});

describe('a repository-sized project', () => {
  it('pages its files, bounds the checkpoint event, flags drift and restores exactly', async () => {
    const { a, stop } = await session('sample-app');
    try {
      // Every file, a page at a time, ignoring node_modules; links and modes are kept.
      const paths: string[] = [];
      const nodes: ProjectPage['page']['edges'][number]['node'][] = [];
      let cursor: string | null = null;
      for (;;) {
        const p = await projectPage(a.sessionId, cursor);
        nodes.push(...p.page.edges.map((e) => e.node));
        if (!p.page.pageInfo.hasNextPage) break;
        cursor = p.page.pageInfo.endCursor;
      }
      paths.push(...nodes.map((n) => n.path));
      // The demo seed may have added a file or two (CHANGELOG.md): compare with the disk.
      const onDisk = Object.keys(snapshotTree(big))
        .filter((p) => !p.startsWith('node_modules/'))
        .sort();
      expect(onDisk.length).toBeGreaterThanOrEqual(FILES + 4);
      expect(paths).toEqual(onDisk);
      expect(paths).not.toContain('node_modules/dep/index.js');
      expect(nodes.find((n) => n.path === 'link.ts')?.kind).toBe('SYMLINK');
      expect(nodes.find((n) => n.path === 'run.sh')?.executable).toBe(true);
      const prefixed = await projectPage(a.sessionId, null, 'src/d1/');
      expect(prefixed.page.totalCount).toBe(FILES / 20);

      // 300 files change before the first checkpoint of this test: its event lists 128 of them.
      for (let i = 0; i < 300; i++)
        fs.appendFileSync(
          join(big, 'src', `d${i % 20}`, `f${String(i).padStart(4, '0')}.ts`),
          '//\n',
        );
      const first = await checkpointNow(a);
      expect(first.fileCount).toBe(onDisk.length);
      const before = snapshotTree(big);
      fs.writeFileSync(join(big, 'src', 'd3', 'f0003.ts'), 'edited by a human\n');
      fs.writeFileSync(join(big, 'added.ts'), 'new\n');
      const second = await checkpointNow(a);
      const events = await checkpointEvents(a.sessionId);
      const e1 = events.find((e) => e.checkpointId === first.checkpointId)!;
      const e2 = events.find((e) => e.checkpointId === second.checkpointId)!;
      expect(e1.files).toHaveLength(128);
      expect(e1.studioFilesOmitted).toBe(300 - 128);
      expect(e1.studioFileCount).toBe(onDisk.length);
      expect(e2.files!.map((f) => f.path)).toEqual(['added.ts', 'src/d3/f0003.ts']);
      expect(e2.studioFilesOmitted).toBe(0);

      // A change on disk after the last checkpoint is flagged in the restore preview.
      fs.writeFileSync(join(big, 'src', 'd5', 'f0005.ts'), 'edited outside the agent\n');
      fs.chmodSync(join(big, 'run.sh'), 0o644);
      const preview = await ok<{
        studioCheckpoint: {
          changes: {
            changed: number;
            removed: number;
            changedOutsideAgent: number;
            edges: { node: { path: string; change: string; changedOutsideAgent: boolean } }[];
          };
        };
      }>(c, CHANGES, { id: first.checkpointId });
      const rows = preview.studioCheckpoint.changes.edges.map((e) => e.node);
      expect(rows).toEqual([
        { path: 'added.ts', change: 'REMOVED', changedOutsideAgent: false },
        { path: 'run.sh', change: 'MODE_CHANGED', changedOutsideAgent: true },
        { path: 'src/d3/f0003.ts', change: 'CHANGED', changedOutsideAgent: false },
        { path: 'src/d5/f0005.ts', change: 'CHANGED', changedOutsideAgent: true },
      ]);

      // Collecting garbage keeps everything a retained checkpoint needs.
      expect(h.server.engine.collectGarbage({ graceMs: 0 })).not.toBeNull();

      const project = (
        (await ok<{ studioProject: unknown }>(
          c,
          `query R($sessionId: String!) { studioProject(sessionId: $sessionId) { revision } }`,
          {
            sessionId: a.sessionId,
          },
        )) as { studioProject: { revision: string } }
      ).studioProject;
      const approval = (
        await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
          input: {
            idempotencyKey: key('restore'),
            sessionId: a.sessionId,
            clientEpoch: a.clientEpoch,
            checkpointId: first.checkpointId,
            checkpointContentHash: first.contentHash,
            expectedRevision: project.revision,
          },
        })
      ).studioRequestCheckpointRestore;
      await ok(c, APPROVE, decideInput(a, approval));
      await waitForEvent(
        c,
        a.sessionId,
        (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === approval.toolCallId,
        'the restore',
        30_000,
      );
      expect(snapshotTree(big)).toEqual(before);
      const after = await ok<{ studioProject: unknown }>(c, PROJECT_PAGE, {
        sessionId: a.sessionId,
      });
      expect((after.studioProject as ProjectPage).contentHash).toBe(first.contentHash);
    } finally {
      stop();
    }
  }, 60_000);
});
