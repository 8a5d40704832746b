/**
 * What the server benchmark appends: a source that owns one session, and an endless, deterministic
 * stream of drafts shaped like a real agent's runs (a user message, streamed chunks, read tools,
 * logs, now and then a patch behind an approval with its lease and checkpoint, a budget update and
 * the final message). Sizes are those of a real timeline, so replay moves realistic bytes.
 */
import { createHash } from 'node:crypto';
import type { EventDraft } from '../../server/engine/eventDrafts.ts';
import type { SessionInfo, Source, SourceHost } from '../../server/sources/Source.ts';

export const BENCH_SESSION_ID = 'ses_bench';
export const BENCH_PROJECT_ID = 'prj_bench';

/** A source with no runtime behind it: the bench drives `host.append` itself. */
export class ServerBenchSource implements Source {
  readonly sourceId = 'bench';
  readonly checkpointsSupported = false;
  readonly checkpointsUnsupportedReason = 'The benchmark source has no project folder.';
  private host: SourceHost | null = null;

  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.setStatus('LIVE');
  }

  async stop(): Promise<void> {
    this.host?.setStatus('STOPPED');
    this.host = null;
  }

  get live(): SourceHost {
    if (!this.host) throw new Error('the bench source is not started');
    return this.host;
  }

  openSession(): Promise<SessionInfo> {
    return this.live.ensureSession({
      sessionId: BENCH_SESSION_ID,
      title: 'Benchmark session',
      mode: 'BUILD',
      requestedModel: 'bench-model',
      model: 'bench-model',
      projectId: BENCH_PROJECT_ID,
    });
  }
}

const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const PROSE =
  'The scene loader reads the level manifest, resolves every prefab reference and then spawns the ' +
  'entities in dependency order. A missing prefab used to crash the loader; now it logs the path and ' +
  'skips the entity so the rest of the level still loads. ';

function prose(length: number, salt: number): string {
  let out = '';
  let i = salt % PROSE.length;
  while (out.length < length) {
    out += PROSE.slice(i, i + (length - out.length));
    i = 0;
  }
  return out;
}

const FILES = [
  'src/main.lua',
  'src/loader.lua',
  'src/player.lua',
  'src/ui/hud.lua',
  'assets/level1.json',
  'README.md',
];

/**
 * Yields drafts forever, run after run. Every id is unique, so the projector's current-state
 * tables (runs, tool calls, approvals, leases, checkpoints) grow as they would in a long session.
 */
export function* benchDrafts(now: () => number): Generator<EventDraft> {
  for (let run = 1; ; run += 1) {
    const runId = `run_${run}`;
    const iso = (offsetMs = 0) => new Date(now() + offsetMs).toISOString();
    yield {
      type: 'USER_MESSAGE',
      runId,
      messageId: `msg_u${run}`,
      role: 'USER',
      content: prose(180, run),
    };
    yield { type: 'RUN_STARTED', runId, status: 'RUNNING' };
    yield {
      type: 'STUDIO_STAGE_CHANGED',
      runId,
      fromStage: 'idle',
      toStage: 'planning',
      detail: null,
    };
    for (let c = 0; c < 6; c += 1)
      yield {
        type: 'ASSISTANT_CHUNK',
        runId,
        messageId: `msg_a${run}`,
        role: 'ASSISTANT',
        content: prose(120, run + c),
      };
    for (let t = 0; t < 2; t += 1) {
      const toolCallId = `tc_${run}_r${t}`;
      const path = FILES[(run + t) % FILES.length]!;
      const argumentsJson = JSON.stringify({ path });
      const base = {
        runId,
        toolCallId,
        toolName: 'workspace.file.read',
        toolVersion: '1.0.0',
      } as const;
      yield {
        ...base,
        type: 'TOOL_PROPOSED',
        status: 'PROPOSED',
        executor: 'SERVER',
        safeSummary: `Read ${path}`,
        argumentHash: digest(argumentsJson),
        argumentsJson,
      };
      yield { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' };
      yield {
        ...base,
        type: 'TOOL_SUCCEEDED',
        status: 'SUCCEEDED',
        resultJson: JSON.stringify({ path, bytes: 1800 + run, excerpt: prose(220, run + t) }),
      };
      yield {
        type: 'STUDIO_LOG',
        runId,
        level: 'info',
        message: `read ${path} (${1800 + run} bytes)`,
        origin: 'agent',
      };
    }
    if (run % 4 === 0) {
      const toolCallId = `tc_${run}_w`;
      const approvalId = `ap_${run}`;
      const path = FILES[run % FILES.length]!;
      const argumentsJson = JSON.stringify({
        path,
        expectedRevision: String(run),
        patch: prose(300, run),
      });
      const argumentHash = digest(argumentsJson);
      const base = {
        runId,
        toolCallId,
        toolName: 'workspace.file.patch',
        toolVersion: '1.0.0',
      } as const;
      const approval = {
        runId: runId as string,
        approvalId,
        toolCallId,
        argumentHash,
        safeSummary: `Patch ${path}: guard the missing-prefab case`,
        reasons: ['Writes to the project.'],
        expiresAt: iso(120_000),
      };
      yield {
        ...base,
        type: 'TOOL_PROPOSED',
        status: 'PROPOSED',
        executor: 'SERVER',
        safeSummary: approval.safeSummary,
        argumentHash,
        argumentsJson,
      };
      yield { ...approval, type: 'APPROVAL_REQUESTED', status: 'PENDING' };
      yield {
        ...approval,
        type: 'APPROVAL_GRANTED',
        status: 'GRANTED',
        decisionReason: 'looks right',
      };
      yield { ...approval, type: 'APPROVAL_CONSUMED', status: 'CONSUMED' };
      yield { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' };
      const lease = {
        runId: runId as string,
        leaseId: `ls_${run}`,
        kind: 'WORKSPACE' as const,
        clientEpoch: '1',
        scopes: ['studio.project.write.server'],
        holder: 'agent:bench',
        contextVersion: 'ctx-1',
        expectedProjectRevision: String(run),
        grantedAt: iso(),
        expiresAt: iso(30_000),
      };
      yield { ...lease, type: 'LEASE_GRANTED', status: 'ACTIVE' };
      yield {
        type: 'CHECKPOINT_CREATED',
        runId,
        checkpointId: `cp_${run}`,
        projectRevision: String(run),
        contentHash: digest(`cp_${run}`),
        reason: 'AGENT_WRITE',
        files: FILES.map((file, i) => ({
          target: 'SERVER' as const,
          path: file,
          contentHash: digest(`${run}:${file}`),
          byteLength: 900 + i * 311,
        })),
        exactPreImage: true,
      };
      yield {
        ...base,
        type: 'TOOL_SUCCEEDED',
        status: 'SUCCEEDED',
        resultJson: JSON.stringify({ path, projectRevision: String(run + 1) }),
      };
      // Released at once: a lease left ACTIVE would expire later and the engine's sweep would
      // append LEASE_EXPIRED events of its own in the middle of the measurement.
      yield { ...lease, type: 'LEASE_REVOKED', status: 'REVOKED', reason: 'WRITE_FINISHED' };
    }
    yield {
      type: 'ASSISTANT_MESSAGE',
      runId,
      messageId: `msg_a${run}`,
      role: 'ASSISTANT',
      content: prose(720, run),
    };
    yield {
      type: 'BUDGET_UPDATED',
      runId,
      budget: {
        dimensions: [
          {
            name: 'tokens',
            scope: 'session',
            limit: '2000000',
            reserved: '4000',
            consumed: String(run * 1900),
            remaining: String(Math.max(0, 2_000_000 - run * 1900)),
            unit: 'token',
          },
          {
            name: 'toolCalls',
            scope: 'session',
            limit: '100000',
            reserved: '0',
            consumed: String(run * 2),
            remaining: String(Math.max(0, 100_000 - run * 2)),
            unit: 'call',
          },
        ],
        resetAt: null,
        platformFunded: true,
        payer: 'PLATFORM',
      },
    };
    yield { type: 'RUN_SUCCEEDED', runId, status: 'SUCCEEDED' };
  }
}

/** The next `count` drafts of a generator. */
export function take(drafts: Iterator<EventDraft>, count: number): EventDraft[] {
  const out: EventDraft[] = [];
  for (let i = 0; i < count; i += 1) out.push(drafts.next().value as EventDraft);
  return out;
}
