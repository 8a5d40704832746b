/**
 * Sessions and runs (rule module): a source's sessions are created once (of two racing creations
 * one creates), a human's session is started in the runtime that owns its project (else the demo
 * agent), and the attached client sets the mode, sends messages, pauses, resumes, cancels and
 * closes. Ending a run goes through `append`, which revokes the run's pending approvals in the
 * same commit (approvalLifecycle.ts).
 */
import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../store/records.ts';
import type { EventDraft } from './eventDrafts.ts';
import type { SessionInfo, SessionSpec } from '../sources/Source.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode, LOCAL_APP_ID, MAX_USER_MESSAGE_BYTES } from '../../protocol/contract.ts';
import { TERMINAL_RUN_STATUSES } from '../../protocol/events.ts';
import type { AgentMode } from '../../protocol/events.ts';
import type { EngineCore } from './core.ts';

export type SessionsHost = EngineCore;

export class Sessions {
  constructor(private readonly h: SessionsHost) {}

  async ensureSession(sourceId: string, spec: SessionSpec): Promise<SessionInfo> {
    const existing = await this.h.db.getSession(spec.sessionId);
    if (existing) return this.h.sessionInfo(existing);
    const createdAt = this.h.iso();
    await this.h.kernel.write(async () => {
      // Checked again inside the transaction: of two racing creations, one creates.
      if (await this.h.db.getSession(spec.sessionId)) return;
      const record: SessionRecord = {
        sessionId: spec.sessionId,
        appId: LOCAL_APP_ID,
        source: sourceId,
        title: spec.title || null,
        projectId: spec.projectId ?? null,
        mode: spec.mode,
        status: 'ACTIVE',
        requestedModel: spec.requestedModel,
        model: spec.model ?? null,
        contextVersion: 'ctx-1',
        currentClientEpoch: '0',
        attachedEpoch: null,
        lastEventSeq: '0',
        currentRunId: null,
        lastRunId: null,
        createdAt,
        updatedAt: createdAt,
        closedAt: null,
      };
      await this.h.db.putSession(record);
      await this.h.append(spec.sessionId, [
        { type: 'SESSION_CREATED', reason: sourceId },
        { type: 'MODE_SELECTED', mode: spec.mode },
      ]);
    });
    return this.h.sessionInfo(await this.h.requireSession(spec.sessionId));
  }

  /** Creates a session from CreateAgentSessionInput (owned by the demo agent when present). */
  async createSession(input: {
    appId: string;
    projectId?: string | null;
    mode: AgentMode;
    requestedModel?: string | null;
  }): Promise<SessionRecord> {
    this.h.requireApp(input.appId);
    if (input.mode === 'BUILD' && !input.projectId)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'BUILD mode needs a projectId.', {
        field: 'projectId',
      });
    if (input.projectId && !(await this.h.db.getProject(input.projectId)))
      throw new StudioError(ErrorCode.BAD_REQUEST, `No project ${input.projectId}.`, {
        field: 'projectId',
      });
    // A project a runtime owns (a --claude-code folder) starts its sessions in that runtime.
    const owner = input.projectId ? this.h.projectOwner(input.projectId) : undefined;
    const source = (owner && this.h.source(owner)) || this.h.source('demo');
    if (!source)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        'No agent can run new sessions here: the built-in agent is off (--no-demo).',
        {
          remediation: 'Start the studio without --no-demo, or connect a runtime.',
        },
      );
    const sessionId = `ses_${randomUUID()}`;
    await this.ensureSession(source.sourceId, {
      sessionId,
      title: '',
      mode: input.mode,
      requestedModel:
        input.requestedModel ?? (source.sourceId === 'demo' ? 'studio-offline-agent' : 'default'),
      model: source.sourceId === 'demo' ? 'studio-offline-agent' : null,
      projectId: input.projectId ?? null,
    });
    return await this.h.requireSession(sessionId);
  }

  async setMode(input: {
    sessionId: string;
    clientEpoch: string;
    mode: AgentMode;
    projectId?: string | null;
  }): Promise<SessionRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    if (input.mode === 'PLAY')
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'PLAY mode needs a game grid; this studio has none.',
        { field: 'mode' },
      );
    if (input.mode === 'BUILD' && !(input.projectId ?? session.projectId))
      throw new StudioError(ErrorCode.BAD_REQUEST, 'BUILD mode needs a projectId.', {
        field: 'projectId',
      });
    if (session.mode !== input.mode)
      await this.h.append(session.sessionId, [{ type: 'MODE_SELECTED', mode: input.mode }]);
    return await this.h.requireSession(session.sessionId);
  }

  async sendMessage(input: {
    sessionId: string;
    clientEpoch: string;
    content: string;
    author?: string | null;
  }): Promise<string> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    await this.h.requireAgentsRunning(session.appId);
    if (session.status === 'PAUSED')
      throw new StudioError(ErrorCode.SESSION_CLOSED, 'The session is paused.', {
        remediation: 'Resume it first.',
      });
    const content = input.content.trim();
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes === 0 || bytes > MAX_USER_MESSAGE_BYTES)
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        `A message must be 1 to ${MAX_USER_MESSAGE_BYTES} bytes.`,
        {
          field: 'content',
        },
      );
    if (session.currentRunId)
      throw new StudioError(
        ErrorCode.RUN_ALREADY_ACTIVE,
        `Run ${session.currentRunId} is still active.`,
        {
          remediation: 'Wait for it to finish or cancel it.',
        },
      );
    const source = this.h.source(session.source);
    if (!source?.sendMessage)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        `The ${session.source} runtime does not take messages here.`,
      );
    const { runId } = await source.sendMessage(this.h.sessionInfo(session), content, {
      author: input.author ?? null,
    });
    return runId;
  }

  async pause(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    if (session.status !== 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_PAUSED', reason: 'HUMAN_STOP' }];
      if (session.currentRunId)
        drafts.push({
          type: 'RUN_PAUSED',
          runId: session.currentRunId,
          reason: 'Paused by a human.',
        });
      await this.h.append(session.sessionId, drafts);
    }
    return await this.h.requireSession(session.sessionId);
  }

  async resume(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    if (session.status === 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_RESUMED' }];
      if (session.currentRunId)
        drafts.push({ type: 'RUN_STARTED', runId: session.currentRunId, reason: 'RESUMED' });
      await this.h.append(session.sessionId, drafts);
    }
    return await this.h.requireSession(session.sessionId);
  }

  async cancelRun(input: {
    sessionId: string;
    clientEpoch: string;
    runId?: string | null;
  }): Promise<string> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    const runId = input.runId ?? session.currentRunId;
    if (!runId) throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, 'No run is active.');
    const run = await this.h.db.getRun(runId);
    if (!run || run.sessionId !== session.sessionId)
      throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, `No run ${runId}.`);
    if (TERMINAL_RUN_STATUSES.has(run.status))
      throw new StudioError(
        ErrorCode.RUN_NOT_ACTIVE,
        `Run ${runId} already ended (${run.status}).`,
      );
    const source = this.h.source(session.source);
    if (source?.cancelRun) await source.cancelRun(this.h.sessionInfo(session), runId);
    await this.endRun(session.sessionId, runId, 'RUN_CANCELLED', 'Cancelled by a human.');
    return runId;
  }

  /** Ends a run with RUN_*; `append` first revokes its pending approvals and cancels their calls. */
  async endRun(
    sessionId: string,
    runId: string,
    type: 'RUN_CANCELLED' | 'RUN_FAILED' | 'RUN_SUCCEEDED' | 'RUN_PREEMPTED',
    reason: string,
    error?: { code: string; message: string } | null,
  ): Promise<void> {
    const run = await this.h.db.getRun(runId);
    if (!run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    await this.h.append(sessionId, [
      {
        type,
        runId,
        reason,
        code: error?.code ?? null,
        error: error ? { code: error.code, message: error.message, retryable: false } : null,
      },
    ]);
  }

  async closeSession(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    if (session.status === 'CLOSED') return session;
    if (session.currentRunId) {
      const source = this.h.source(session.source);
      if (source?.cancelRun)
        await source.cancelRun(this.h.sessionInfo(session), session.currentRunId);
      await this.endRun(
        session.sessionId,
        session.currentRunId,
        'RUN_CANCELLED',
        'The session was closed.',
      );
    }
    await this.h.append(session.sessionId, [{ type: 'SESSION_CLOSED', reason: 'HUMAN_STOP' }]);
    return await this.h.requireSession(session.sessionId);
  }

  /** Cancels a run on its source and records RUN_CANCELLED (its approvals are revoked with it). */
  async stopRun(sessionId: string, runId: string, reason: string): Promise<void> {
    const session = await this.h.db.getSession(sessionId);
    const run = await this.h.db.getRun(runId);
    if (!session || !run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    const source = this.h.source(session.source);
    try {
      if (source?.cancelRun) await source.cancelRun(this.h.sessionInfo(session), runId);
    } catch (error) {
      this.h.logger.warn('source could not cancel a run', { runId, error: String(error) });
    }
    await this.endRun(sessionId, runId, 'RUN_CANCELLED', reason);
  }
}
