/**
 * The built-in offline agent. Deterministic: the same message on the same project produces the
 * same reads, text, patches and approval request (only ids and times differ). It works in BUILD
 * mode on real project folders through the engine: reads files, streams assistant chunks and a
 * final message, patches files (AGENT_WRITE checkpoints under a WORKSPACE lease), asks approval
 * before deleting anything and waits for the decision or the expiry, reports budget use, and
 * finishes the run.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Engine } from '../../engine/Engine.ts';
import type { EventDraft, BudgetValue } from '../../engine/eventDrafts.ts';
import { approvalFieldsOf } from '../../engine/recordDrafts.ts';
import { StudioError } from '../../engine/StudioError.ts';
import type { SessionInfo, Source, SourceHost, ToolDecision } from '../Source.ts';
import type { ApprovalRecord, ToolCallRecord } from '../../store/records.ts';
import { ProjectWorkspace } from '../../workspace/ProjectWorkspace.ts';
import { canonicalJson } from '../../workspace/canonicalJson.ts';
import { TERMINAL_RUN_STATUSES } from '../../../protocol/events.ts';
import { ErrorCode } from '../../../protocol/contract.ts';

export interface DemoAgentOptions {
  engine: Engine;
  dataDir: string;
  /** Pause between steps; 0 runs a script as fast as the engine allows. */
  stepMs: number;
}

/** The demo's project folders (created with the sample project when missing). */
export const DEMO_PROJECTS = [
  { projectId: 'sample-app', name: 'sample-app' },
  { projectId: 'cleanup-app', name: 'cleanup-app' },
] as const;

/** STOPPED: the studio is shutting down; the approval stays pending for the next start. */
/** REVOKED: what the call waited on ended (run, session, kill switch, a changed target). */
type Outcome = 'GRANTED' | 'DENIED' | 'EXPIRED' | 'REVOKED' | 'STOPPED';

interface Waiter {
  resolve: (outcome: Outcome) => void;
}

const MODEL = 'studio-offline-agent';

export class DemoAgent implements Source {
  readonly sourceId = 'demo';
  readonly checkpointsSupported = true;
  private readonly engine: Engine;
  private readonly dataDir: string;
  private stepMs: number;
  private host: SourceHost | null = null;
  private readonly waiters = new Map<string, Waiter>();
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;
  private ticker: NodeJS.Timeout | null = null;

  constructor(options: DemoAgentOptions) {
    this.engine = options.engine;
    this.dataDir = options.dataDir;
    this.stepMs = options.stepMs;
  }

  /** Creates (if needed) and registers the demo project folders. */
  async openProjects(): Promise<void> {
    for (const p of DEMO_PROJECTS) {
      const root = join(this.dataDir, 'projects', p.projectId);
      mkdirSync(root, { recursive: true });
      ProjectWorkspace.createSample(root);
      await this.engine.registerProject({ projectId: p.projectId, name: p.name, root });
    }
  }

  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.setStatus('LIVE', 'built-in offline agent');
    // Runs cut off by a restart cannot resume mid-step: they end as preempted, truthfully.
    for (const session of await this.engine.reads.listAllSessions()) {
      if (session.source !== this.sourceId || !session.currentRunId) continue;
      const pending = await this.engine.reads.listPendingApprovals(session.sessionId);
      if (pending.some((a) => a.runId === session.currentRunId)) {
        await this.resumeWaiting(session.sessionId, session.currentRunId);
        continue;
      }
      // A decision the outbox has not carried out yet: its job runs the call and ends the run.
      if (await this.decisionOutstanding(session.currentRunId)) continue;
      await this.endCutCalls(session.sessionId, session.currentRunId);
      await this.engine.endRun(
        session.sessionId,
        session.currentRunId,
        'RUN_PREEMPTED',
        'The studio restarted during this run.',
      );
    }
  }

  /**
   * The run's calls a restart cut off while they ran (a patch dispatched, its result never
   * recorded) end TOOL_OUTCOME_UNKNOWN: the workspace journal finished or undid the write at
   * start, so the files are wholly before or after it, but which is not known here.
   */
  private async endCutCalls(sessionId: string, runId: string): Promise<void> {
    const dispatched: string[] = [];
    for (let after = 0n; ;) {
      const rows = await this.engine.reads.readEvents(sessionId, after, 1000);
      for (const row of rows)
        if (row.type === 'TOOL_DISPATCHED' && row.runId === runId)
          dispatched.push((JSON.parse(row.payload) as { toolCallId: string }).toolCallId);
      if (rows.length < 1000) break;
      after = rows[rows.length - 1]!.seq;
    }
    for (const toolCallId of dispatched) {
      const call = await this.engine.reads.getToolCall(toolCallId);
      if (!call || call.status !== 'RUNNING') continue;
      await this.append(sessionId, [
        {
          runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          type: 'TOOL_OUTCOME_UNKNOWN',
          status: 'OUTCOME_UNKNOWN',
          error: {
            code: ErrorCode.TOOL_FAILED,
            message:
              'The studio restarted while this call ran; whether it finished is not known (the checkpoint before it holds the files).',
            retryable: false,
          },
        },
      ]);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    for (const waiter of [...this.waiters.values()]) waiter.resolve('STOPPED');
    this.waiters.clear();
    await Promise.allSettled([...this.running.values()]);
  }

  /** Sends a message to `sessionId` every `everyMs` while it is idle, so a live session keeps moving. */
  startTicker(sessionId: string, everyMs: number, messages: readonly string[]): void {
    let n = 0;
    const tick = async () => {
      const session = await this.engine.reads.getSession(sessionId);
      if (!session || session.currentRunId || session.status !== 'ACTIVE' || this.stopped) return;
      if ((await this.engine.policy(session.appId)).killSwitch) return;
      const content = messages[n % messages.length]!;
      n += 1;
      await this.startRun(this.engine.sessionInfo(session), content);
    };
    this.ticker = setInterval(() => {
      tick().catch((error: unknown) =>
        this.host?.logger.warn('demo ticker failed', { error: String(error) }),
      );
    }, everyMs);
    this.ticker.unref();
  }

  async sendMessage(
    session: SessionInfo,
    content: string,
    options?: { author: string | null },
  ): Promise<{ runId: string }> {
    return { runId: await this.startRun(session, content, { author: options?.author ?? null }) };
  }

  /** Appends USER_MESSAGE and RUN_STARTED now and runs the script in the background. */
  async startRun(
    session: SessionInfo,
    content: string,
    options: { stepMs?: number; author?: string | null } = {},
  ): Promise<string> {
    const runId = `run_${randomUUID()}`;
    await this.append(session.sessionId, [
      {
        type: 'USER_MESSAGE',
        runId,
        messageId: `msg_${randomUUID()}`,
        role: 'USER',
        content,
        ...(options.author ? { studioAuthor: options.author } : {}),
      },
      { type: 'RUN_STARTED', runId },
    ]);
    const done = this.script(session.sessionId, runId, content, options.stepMs ?? this.stepMs)
      .catch((error: unknown) => this.failRun(session.sessionId, runId, error))
      .finally(() => this.running.delete(runId));
    this.running.set(runId, done);
    return runId;
  }

  /** Resolves when the run's script finished or is waiting for a human decision. */
  async settled(runId: string): Promise<void> {
    await Promise.race([this.running.get(runId), this.untilWaiting(runId)]);
  }

  private readonly waitingRuns = new Map<string, () => void>();
  private untilWaiting(runId: string): Promise<void> {
    if (!this.running.has(runId)) return Promise.resolve();
    return new Promise((resolve) => this.waitingRuns.set(runId, resolve));
  }

  /**
   * The outbox's 'decision' job (decisions.ts). A script waiting on the approval is woken; a
   * granted delete runs here (shared with that script), so the job ends only once the call ran
   * or failed, and a job run again after a crash does only what is left. After a restart no
   * script waits: the call runs (or fails) here and the run ends here too.
   */
  async continueDecision(decision: ToolDecision): Promise<void> {
    const live = decision.runId !== null && this.running.has(decision.runId);
    this.waiters.get(decision.approvalId)?.resolve(decision.approved ? 'GRANTED' : 'DENIED');
    const call = await this.engine.reads.getToolCall(decision.toolCallId);
    if (!call || call.toolName !== 'workspace.file.delete' || !decision.runId) return;
    const runId = decision.runId;
    if (decision.approved)
      await this.executeDelete(decision.sessionId, runId, call.toolCallId, pathsOf(call));
    if (live || (await this.runOver(runId))) return;
    if (!decision.approved)
      await this.engine.endRun(
        decision.sessionId,
        runId,
        'RUN_FAILED',
        'The human denied the tool call.',
      );
    else if ((await this.engine.reads.getToolCall(call.toolCallId))?.status === 'SUCCEEDED')
      await this.append(decision.sessionId, [
        { type: 'RUN_SUCCEEDED', runId, reason: 'Finished after a restart.' },
      ]);
  }

  /** True while a 'decision' job of this run waits in the outbox (or a dead worker left it). */
  private async decisionOutstanding(runId: string): Promise<boolean> {
    for (const job of await this.engine.listJobs(['PENDING', 'CLAIMED'])) {
      if (job.kind !== 'decision') continue;
      const { decision } = JSON.parse(job.payload) as { decision: ToolDecision };
      if (decision.runId === runId) return true;
    }
    return false;
  }

  onApprovalExpired(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    const waiter = this.waiters.get(decision.approvalId);
    if (waiter) waiter.resolve('EXPIRED');
    else if (decision.runId)
      this.finishExpired(decision.sessionId, decision.runId, decision.toolCallId).catch(
        (error: unknown) =>
          this.host?.logger.warn('demo could not end an expired run', { error: String(error) }),
      );
  }

  onApprovalRevoked(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    this.waiters.get(decision.approvalId)?.resolve('REVOKED');
  }

  async cancelRun(): Promise<void> {
    // The engine records RUN_CANCELLED and revokes the run's approvals first; a waiting script
    // hears of it through onApprovalRevoked and sees that the run is over.
  }

  /** The demo can propose its delete again, in a new run, once the old one ended. */
  canAskAgain(session: SessionInfo, call: ToolCallRecord): boolean {
    return call.toolName === 'workspace.file.delete' && session.projectId !== null && !this.stopped;
  }

  async askAgain(
    session: SessionInfo,
    call: ToolCallRecord,
    options: { author: string | null },
  ): Promise<string> {
    const paths = call.argumentsJson
      ? ((JSON.parse(call.argumentsJson) as { paths?: string[] }).paths ?? [])
      : [];
    const runId = `run_${randomUUID()}`;
    await this.append(session.sessionId, [
      {
        type: 'RUN_STARTED',
        runId,
        reason: options.author ? `Asked again by ${options.author}` : 'Asked again',
      },
    ]);
    const approval = await this.proposeDelete(session.sessionId, runId, paths);
    const done = this.settleDelete(session.sessionId, runId, approval, paths)
      .then(async (outcome) => {
        if (outcome === 'GRANTED' && !(await this.runOver(runId)))
          await this.append(session.sessionId, [
            { type: 'RUN_SUCCEEDED', runId, reason: 'Finished after asking again.' },
          ]);
      })
      .catch((error: unknown) => this.failRun(session.sessionId, runId, error))
      .finally(() => this.running.delete(runId));
    this.running.set(runId, done);
    return approval.approvalId;
  }

  // ------------------------------------------------------------------------------------------

  private async append(sessionId: string, drafts: EventDraft[]): Promise<void> {
    if (!this.host) throw new Error('demo agent not started');
    await this.host.append(sessionId, drafts);
  }

  private async runOver(runId: string): Promise<boolean> {
    const run = await this.engine.reads.getRun(runId);
    return !run || TERMINAL_RUN_STATUSES.has(run.status) || this.stopped;
  }

  /** Waits `ms`, then while the session is paused; false when the run ended meanwhile. */
  private async step(sessionId: string, runId: string, ms: number): Promise<boolean> {
    if (ms > 0) await delay(ms);
    else await delay(0);
    while (
      (await this.engine.reads.getSession(sessionId))?.status === 'PAUSED' &&
      !(await this.runOver(runId))
    )
      await delay(100);
    return !(await this.runOver(runId));
  }

  private async script(
    sessionId: string,
    runId: string,
    content: string,
    ms: number,
  ): Promise<void> {
    const session = await this.engine.requireSession(sessionId);
    const words = content.toLowerCase();
    const wantsCleanup = /\b(clean|delete|remove|tidy)\b/.test(words);
    const readOnly = session.mode === 'ASK' || !session.projectId;
    let toolCalls = 0;

    await this.append(sessionId, [
      {
        type: 'STUDIO_STAGE_CHANGED',
        runId,
        fromStage: null,
        toStage: 'plan',
        detail: 'Reading the project',
      },
    ]);
    if (!(await this.step(sessionId, runId, ms))) return;

    let listing: string[] = [];
    let readme = '';
    if (session.projectId) {
      const project = await this.engine.projectOfSession(sessionId);
      listing =
        project && !project.unavailableReason
          ? (await this.engine.projectFiles(project.projectId)).map((f) => f.path)
          : [];
      await this.serverTool(
        sessionId,
        runId,
        'workspace.file.list',
        {},
        `List ${listing.length} project files`,
        {
          files: listing,
        },
      );
      toolCalls += 1;
      if (!(await this.step(sessionId, runId, ms))) return;
      const ws = await this.engine.workspace(session.projectId);
      readme = ws.exists('README.md') ? ws.readFile('README.md') : '';
      await this.serverTool(
        sessionId,
        runId,
        'workspace.file.read',
        { path: 'README.md' },
        'Read README.md',
        {
          path: 'README.md',
          byteLength: Buffer.byteLength(readme),
          firstLine: readme.split('\n')[0] ?? '',
        },
      );
      toolCalls += 1;
      if (!(await this.step(sessionId, runId, ms))) return;
    }

    const plan = readOnly
      ? `I read ${listing.length} files. ${describeProject(readme)} In ASK mode I only read; nothing will change.`
      : `I read ${listing.length} files. ${describeProject(readme)} I will note your request in CHANGELOG.md` +
        (wantsCleanup ? ', then remove the scratch file I use, which needs your approval.' : '.');
    const messageId = `msg_${randomUUID()}`;
    for (const chunk of chunks(plan, 48)) {
      await this.append(sessionId, [
        { type: 'ASSISTANT_CHUNK', runId, messageId, role: 'ASSISTANT', content: chunk },
      ]);
      if (!(await this.step(sessionId, runId, Math.floor(ms / 3)))) return;
    }
    await this.append(sessionId, [
      { type: 'ASSISTANT_MESSAGE', runId, messageId, role: 'ASSISTANT', content: plan },
      {
        type: 'BUDGET_UPDATED',
        runId,
        budget: await this.budget(sessionId, content, plan, toolCalls),
      },
    ]);
    if (readOnly) {
      await this.append(sessionId, [{ type: 'RUN_SUCCEEDED', runId, reason: 'Answered.' }]);
      this.resolveWaiting(runId);
      return;
    }
    if (!(await this.step(sessionId, runId, ms))) return;

    await this.append(sessionId, [
      { type: 'STUDIO_STAGE_CHANGED', runId, fromStage: 'plan', toStage: 'edit', detail: null },
    ]);
    const projectId = session.projectId!;
    const ws = await this.engine.workspace(projectId);
    const changelog = ws.exists('CHANGELOG.md') ? ws.readFile('CHANGELOG.md') : '# Changelog\n';
    const scratchPath = 'tmp/agent-scratch.md';
    const changes = [
      { path: 'CHANGELOG.md', content: `${changelog.trimEnd()}\n- ${oneLine(content)}\n` },
      ...(wantsCleanup
        ? [{ path: scratchPath, content: `Scratch notes for: ${oneLine(content)}\n` }]
        : []),
    ];
    await this.patch(sessionId, runId, changes, `Write ${changes.map((c) => c.path).join(', ')}`);
    toolCalls += 1;
    await this.append(sessionId, [
      {
        type: 'STUDIO_LOG',
        runId,
        level: 'info',
        message: `patched ${changes.length} file(s)`,
        origin: 'workspace.file.patch',
      },
    ]);
    if (!(await this.step(sessionId, runId, ms))) return;

    if (wantsCleanup) {
      const outcome = await this.askToDelete(sessionId, runId, [scratchPath]);
      toolCalls += 1;
      if (outcome !== 'GRANTED') return;
      if (!(await this.step(sessionId, runId, ms))) return;
    }

    const done =
      `Done: CHANGELOG.md now records "${oneLine(content)}".` +
      (wantsCleanup ? ' The scratch file is gone.' : '');
    await this.append(sessionId, [
      { type: 'STUDIO_STAGE_CHANGED', runId, fromStage: 'edit', toStage: 'verify', detail: null },
      {
        type: 'ASSISTANT_MESSAGE',
        runId,
        messageId: `msg_${randomUUID()}`,
        role: 'ASSISTANT',
        content: done,
      },
      {
        type: 'BUDGET_UPDATED',
        runId,
        budget: await this.budget(sessionId, content, plan + done, toolCalls),
      },
      { type: 'RUN_SUCCEEDED', runId, reason: 'Finished.' },
    ]);
    this.resolveWaiting(runId);
  }

  /** A SERVER tool that needs no approval: proposed, dispatched and succeeded in one commit. */
  private async serverTool(
    sessionId: string,
    runId: string,
    toolName: string,
    args: object,
    summary: string,
    result: object,
  ): Promise<void> {
    const toolCallId = `tc_${randomUUID()}`;
    const session = await this.engine.requireSession(sessionId);
    const argumentHash = this.engine.argumentHash(
      sessionId,
      toolCallId,
      toolName,
      args,
      session.contextVersion,
    );
    const base = { runId, toolCallId, toolName, toolVersion: '1.0.0' };
    await this.append(sessionId, [
      {
        ...base,
        type: 'TOOL_PROPOSED',
        status: 'PROPOSED',
        executor: 'SERVER',
        safeSummary: summary,
        argumentHash,
        argumentsJson: canonicalJson(args),
        contextVersion: session.contextVersion,
      },
      { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' },
      { ...base, type: 'TOOL_SUCCEEDED', status: 'SUCCEEDED', resultJson: canonicalJson(result) },
    ]);
  }

  private async patch(
    sessionId: string,
    runId: string,
    changes: { path: string; content: string | null }[],
    summary: string,
  ): Promise<void> {
    const toolCallId = `tc_${randomUUID()}`;
    const project = await this.engine.projectOfSession(sessionId);
    if (!project) throw new Error('no project');
    const args = {
      changes: changes.map((c) => ({
        path: c.path,
        target: 'SERVER',
        bytes: c.content === null ? null : Buffer.byteLength(c.content),
      })),
      expectedRevision: project.revision,
    };
    const session = await this.engine.requireSession(sessionId);
    const diffed = await this.engine.proposalDiff(sessionId, changes);
    const base = { runId, toolCallId, toolName: 'workspace.file.patch', toolVersion: '1.0.0' };
    await this.append(sessionId, [
      {
        ...base,
        type: 'TOOL_PROPOSED',
        status: 'PROPOSED',
        executor: 'SERVER',
        safeSummary: summary,
        argumentHash: this.engine.argumentHash(
          sessionId,
          toolCallId,
          'workspace.file.patch',
          args,
          session.contextVersion,
          diffed?.targets,
        ),
        argumentsJson: canonicalJson(args),
        contextVersion: session.contextVersion,
        ...(diffed ? { studioDiff: diffed.diff } : {}),
      },
      { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' },
    ]);
    try {
      const result = await this.engine.patchProject({
        sessionId,
        runId,
        toolCallId,
        toolName: 'workspace.file.patch',
        expectedRevision: project.revision,
        changes,
      });
      await this.append(sessionId, [
        { ...base, type: 'TOOL_SUCCEEDED', status: 'SUCCEEDED', resultJson: canonicalJson(result) },
      ]);
    } catch (error) {
      await this.failTool(sessionId, base, error);
      throw error;
    }
  }

  /** Proposes workspace.file.delete (approval REQUIRED) and waits for the decision or expiry. */
  private async askToDelete(sessionId: string, runId: string, paths: string[]): Promise<Outcome> {
    const approval = await this.proposeDelete(sessionId, runId, paths);
    return this.settleDelete(sessionId, runId, approval, paths);
  }

  private async proposeDelete(
    sessionId: string,
    runId: string,
    paths: string[],
  ): Promise<ApprovalRecord> {
    const project = await this.engine.projectOfSession(sessionId);
    if (!project) throw new Error('no project');
    return this.engine.proposeWithApproval({
      sessionId,
      runId,
      toolName: 'workspace.file.delete',
      arguments: { expectedRevision: project.revision, paths },
      safeSummary: `Delete ${paths.length} file(s) from project "${project.name}": ${paths.join(', ')} (revision ${project.revision}).`,
      reasons: [
        'Deleting files is always approval-gated.',
        'DESTRUCTIVE: the file content is only kept in the pre-image checkpoint.',
      ],
      fileChanges: paths.map((path) => ({ path, content: null })),
    });
  }

  /**
   * Waits for the delete's decision (a rule may have made it already) and acts on it. A call
   * revoked while the run goes on (the session was paused, a target changed) is asked again
   * once the session runs.
   */
  private async settleDelete(
    sessionId: string,
    runId: string,
    first: ApprovalRecord,
    paths: string[],
  ): Promise<Outcome> {
    let approval = first;
    for (;;) {
      const outcome = await this.outcomeOf(approval, runId);
      if (outcome === 'GRANTED')
        await this.executeDelete(sessionId, runId, approval.toolCallId, paths);
      else if (outcome === 'DENIED' && !(await this.runOver(runId))) {
        const decided = await this.engine.reads.getApproval(approval.approvalId);
        const who = decided?.ruleName
          ? `Rule "${decided.ruleName}" denied the tool call.`
          : decided?.decidedBy && decided.decidedBy !== 'owner'
            ? `${decided.decidedBy} denied the tool call.`
            : 'The human denied the tool call.';
        await this.append(sessionId, [
          {
            type: 'RUN_FAILED',
            runId,
            reason: who,
            code: ErrorCode.APPROVAL_DENIED,
            error: {
              code: ErrorCode.APPROVAL_DENIED,
              message: 'workspace.file.delete was denied.',
              retryable: false,
            },
          },
        ]);
      } else if (outcome === 'EXPIRED')
        await this.finishExpired(sessionId, runId, approval.toolCallId);
      else if (outcome === 'REVOKED' && !(await this.runOver(runId))) {
        // Still our run (paused, or its target changed): ask again once it may go on.
        if (!(await this.step(sessionId, runId, 0))) {
          this.resolveWaiting(runId);
          return outcome;
        }
        approval = await this.proposeDelete(sessionId, runId, paths);
        continue;
      }
      this.resolveWaiting(runId);
      return outcome;
    }
  }

  /** The outcome of an approval: at once if already decided (a rule, the kill switch), else awaited. */
  private async outcomeOf(approval: ApprovalRecord, runId: string): Promise<Outcome> {
    const now = (await this.engine.reads.getApproval(approval.approvalId)) ?? approval;
    switch (now.status) {
      case 'GRANTED':
      case 'CONSUMED':
        return Promise.resolve('GRANTED');
      case 'DENIED':
        return Promise.resolve('DENIED');
      case 'EXPIRED':
        return Promise.resolve('EXPIRED');
      case 'REVOKED':
        return Promise.resolve('REVOKED');
      case 'PENDING':
        return this.waitFor(approval.approvalId, runId);
    }
  }

  private waitFor(approvalId: string, runId: string): Promise<Outcome> {
    return new Promise((resolve) => {
      this.waiters.set(approvalId, {
        resolve: (outcome) => {
          this.waiters.delete(approvalId);
          resolve(outcome);
        },
      });
      this.waitingRuns.get(runId)?.();
    });
  }

  private resolveWaiting(runId: string): void {
    this.waitingRuns.get(runId)?.();
    this.waitingRuns.delete(runId);
  }

  /** After a restart: the run still waits on its approval; its decision finishes it. */
  private async resumeWaiting(sessionId: string, runId: string): Promise<void> {
    const approval = (await this.engine.reads.listPendingApprovals(sessionId)).find(
      (a) => a.runId === runId,
    );
    if (!approval) return;
    const call = await this.engine.reads.getToolCall(approval.toolCallId);
    const paths = call?.argumentsJson
      ? ((JSON.parse(call.argumentsJson) as { paths?: string[] }).paths ?? [])
      : [];
    const done = this.waitFor(approval.approvalId, runId).then(async (outcome) => {
      if (outcome === 'GRANTED') {
        await this.executeDelete(sessionId, runId, approval.toolCallId, paths);
        await this.append(sessionId, [
          { type: 'RUN_SUCCEEDED', runId, reason: 'Finished after a restart.' },
        ]);
      } else if (outcome === 'EXPIRED')
        await this.finishExpired(sessionId, runId, approval.toolCallId);
      else if (outcome === 'DENIED' && !(await this.runOver(runId)))
        await this.engine.endRun(sessionId, runId, 'RUN_FAILED', 'The human denied the tool call.');
      else if (outcome === 'REVOKED' && !(await this.runOver(runId)))
        await this.engine.endRun(sessionId, runId, 'RUN_CANCELLED', 'Its approval was revoked.');
    });
    this.running.set(runId, done);
  }

  /**
   * Runs a granted delete once: the script and the outbox job share one execution, and a call
   * already run (or ended) is left alone.
   */
  private executeDelete(
    sessionId: string,
    runId: string,
    toolCallId: string,
    paths: string[],
  ): Promise<void> {
    let execution = this.executions.get(toolCallId);
    if (!execution) {
      execution = this.runDelete(sessionId, runId, toolCallId, paths).finally(() =>
        this.executions.delete(toolCallId),
      );
      this.executions.set(toolCallId, execution);
    }
    return execution;
  }

  private readonly executions = new Map<string, Promise<void>>();

  private async runDelete(
    sessionId: string,
    runId: string,
    toolCallId: string,
    paths: string[],
  ): Promise<void> {
    const call = await this.engine.reads.getToolCall(toolCallId);
    const approval = call?.approvalId ? await this.engine.reads.getApproval(call.approvalId) : null;
    if (!call || !approval) return;
    const base = { runId, toolCallId, toolName: call.toolName, toolVersion: call.toolVersion };
    if (call.status === 'RUNNING') {
      // Dispatched by a server that died before the delete was recorded: whether the files went
      // is not known here (the workspace journal finished or undid the change at start).
      await this.append(sessionId, [
        {
          ...base,
          type: 'TOOL_OUTCOME_UNKNOWN',
          status: 'OUTCOME_UNKNOWN',
          error: {
            code: ErrorCode.TOOL_FAILED,
            message:
              'The studio restarted while the delete ran; check the project (the AGENT_WRITE checkpoint before it holds the files).',
            retryable: false,
          },
        },
      ]);
      await this.engine.endRun(
        sessionId,
        runId,
        'RUN_PREEMPTED',
        'The studio restarted during this run.',
      );
      return;
    }
    if (call.status !== 'WAITING_FOR_APPROVAL' || approval.status !== 'GRANTED') return;
    await this.append(sessionId, [
      { type: 'APPROVAL_CONSUMED', status: 'CONSUMED', ...approvalFieldsOf(approval), runId },
      { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' },
    ]);
    this.engine.faultPoint('demo-dispatched');
    const project = await this.engine.projectOfSession(sessionId);
    const args = call.argumentsJson
      ? (JSON.parse(call.argumentsJson) as { expectedRevision: string })
      : null;
    try {
      if (!project || !args) throw new StudioError(ErrorCode.TOOL_FAILED, 'The project is gone.');
      const ws = await this.engine.workspace(project.projectId);
      const result = await this.engine.patchProject({
        sessionId,
        runId,
        toolCallId,
        toolName: call.toolName,
        expectedRevision: args.expectedRevision,
        changes: paths.filter((p) => ws.exists(p)).map((path) => ({ path, content: null })),
      });
      this.engine.faultPoint('demo-written');
      await this.append(sessionId, [
        { ...base, type: 'TOOL_SUCCEEDED', status: 'SUCCEEDED', resultJson: canonicalJson(result) },
      ]);
    } catch (error) {
      const e = await this.failTool(sessionId, base, error);
      await this.engine.endRun(sessionId, runId, 'RUN_FAILED', e.message, {
        code: e.code,
        message: e.message,
      });
    }
  }

  /** Records TOOL_FAILED for a server tool that threw; returns the error as a StudioError. */
  private async failTool(
    sessionId: string,
    base: { runId: string; toolCallId: string; toolName: string; toolVersion: string },
    error: unknown,
  ): Promise<StudioError> {
    const e =
      error instanceof StudioError ? error : new StudioError(ErrorCode.TOOL_FAILED, String(error));
    await this.append(sessionId, [
      {
        ...base,
        type: 'TOOL_FAILED',
        status: 'FAILED',
        error: {
          code: e.code,
          message: e.message,
          retryable: e.retryable,
          remediation: e.remediation,
        },
      },
    ]);
    return e;
  }

  private async finishExpired(sessionId: string, runId: string, toolCallId: string): Promise<void> {
    const call = await this.engine.reads.getToolCall(toolCallId);
    if (call && call.status === 'WAITING_FOR_APPROVAL')
      await this.append(sessionId, [this.engine.expiredToolDraft(call)]);
    if (!(await this.runOver(runId)))
      await this.append(sessionId, [
        {
          type: 'RUN_FAILED',
          runId,
          reason: 'Nobody decided the approval before it expired.',
          code: ErrorCode.APPROVAL_EXPIRED,
          error: {
            code: ErrorCode.APPROVAL_EXPIRED,
            message: 'The approval expired; the call did not run.',
            retryable: true,
          },
        },
      ]);
  }

  private async failRun(sessionId: string, runId: string, error: unknown): Promise<void> {
    this.engine.logger.warn('demo run failed', { runId, error: String(error) });
    const e =
      error instanceof StudioError
        ? error
        : new StudioError(ErrorCode.TOOL_FAILED, 'The agent hit an internal error.');
    try {
      await this.engine.endRun(sessionId, runId, 'RUN_FAILED', e.message, {
        code: e.code,
        message: e.message,
      });
    } catch (inner) {
      this.engine.logger.error('could not end a failed run', { runId, error: String(inner) });
    }
    this.resolveWaiting(runId);
  }

  private async budget(
    sessionId: string,
    input: string,
    output: string,
    toolCalls: number,
  ): Promise<BudgetValue> {
    const runs = (await this.engine.reads.getBudget(sessionId))?.budget.dimensions.find(
      (d) => d.name === 'REQUESTS',
    );
    const requests = BigInt(runs?.consumed ?? '0') + 1n;
    const dim = (name: string, scope: string, limit: bigint, consumed: bigint, unit: string) => ({
      name,
      scope,
      limit: limit.toString(),
      reserved: '0',
      consumed: consumed.toString(),
      remaining: (limit > consumed ? limit - consumed : 0n).toString(),
      unit,
    });
    const inTokens = BigInt(Math.ceil(input.length / 4) + 900);
    const outTokens = BigInt(Math.ceil(output.length / 4));
    return {
      dimensions: [
        dim('INPUT_TOKENS', 'TURN', 32_000n, inTokens, 'tokens'),
        dim('OUTPUT_TOKENS', 'TURN', 8_000n, outTokens, 'tokens'),
        dim('TOOL_CALLS', 'TURN', 16n, BigInt(toolCalls), 'calls'),
        dim('REQUESTS', 'SESSION', 200n, requests, 'requests'),
      ],
      resetAt: null,
      platformFunded: true,
      payer: 'PLATFORM',
    };
  }

  /** For tests and the seed: changes the pace of later runs. */
  setStepMs(ms: number): void {
    this.stepMs = ms;
  }

  get model(): string {
    return MODEL;
  }
}

/** The paths a workspace.file.delete call names. */
function pathsOf(call: ToolCallRecord): string[] {
  return call.argumentsJson
    ? ((JSON.parse(call.argumentsJson) as { paths?: string[] }).paths ?? [])
    : [];
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

function describeProject(readme: string): string {
  const title = readme.split('\n').find((l) => l.startsWith('# '));
  return title ? `The project is "${title.slice(2).trim()}".` : 'The project has no README title.';
}
