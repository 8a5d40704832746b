/**
 * An in-memory SourceHost for bridge tests: the engine's append contract (in order, foreignId
 * dedupe per session, seq per session) without the store, plus a logger that keeps every line
 * exactly as the source handed it over (no redaction), so a test can prove a secret was never
 * passed to the logger at all.
 */
import type { EventDraft, QuestionValue, StoredEvent } from '../../server/engine/eventDrafts.ts';
import type { Logger } from '../../server/logger.ts';
import type { ApprovalStatus } from '../../protocol/events.ts';
import type {
  SessionInfo,
  SessionSpec,
  SourceHost,
  SourceStatus,
} from '../../server/sources/Source.ts';
import { waitUntil } from './recordedRequest.ts';

export interface RecordingLogger extends Logger {
  readonly lines: string[];
  readonly secrets: string[];
}

export function makeRecordingLogger(): RecordingLogger {
  const lines: string[] = [];
  const secrets: string[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push(`${level} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}`);
  };
  return {
    lines,
    secrets,
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    addSecret: (s) => void secrets.push(s),
  };
}

interface HostSession {
  spec: SessionSpec;
  info: SessionInfo;
  events: StoredEvent[];
  foreignIds: Set<string>;
}

export class MemorySourceHost implements SourceHost {
  readonly logger: RecordingLogger;
  readonly statuses: { status: SourceStatus; detail: string | null }[] = [];
  readonly sessions = new Map<string, HostSession>();
  clock = Date.parse('2026-11-30T12:00:00Z');
  /** When set, append throws for drafts this returns true for (to test a refusing engine). */
  refuse: ((draft: EventDraft) => boolean) | null = null;
  private eventCounter = 0;

  constructor(logger: RecordingLogger = makeRecordingLogger()) {
    this.logger = logger;
  }

  now(): number {
    return this.clock;
  }

  async ensureSession(spec: SessionSpec): Promise<SessionInfo> {
    const existing = this.sessions.get(spec.sessionId);
    if (existing) return existing.info;
    const info: SessionInfo = {
      sessionId: spec.sessionId,
      source: 'test',
      status: 'ACTIVE',
      projectId: spec.projectId ?? null,
      currentRunId: null,
      lastEventSeq: '0',
    };
    this.sessions.set(spec.sessionId, { spec, info, events: [], foreignIds: new Set() });
    return info;
  }

  async findSession(sessionId: string): Promise<SessionInfo | null> {
    return this.sessions.get(sessionId)?.info ?? null;
  }

  /** How many group commits (slices) the bridges asked for. */
  groupCommits = 0;

  groupCommit<T>(fn: () => Promise<T>): Promise<T> {
    this.groupCommits += 1;
    return fn();
  }

  async append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`append to unknown session ${sessionId}`);
    if (this.refuse && drafts.some((d) => this.refuse?.(d)))
      throw new Error('refused by the test engine');
    const stored: StoredEvent[] = [];
    for (const draft of drafts) {
      if (draft.foreignId !== undefined) {
        if (session.foreignIds.has(draft.foreignId)) continue;
        session.foreignIds.add(draft.foreignId);
      }
      this.eventCounter += 1;
      const event = {
        ...draft,
        eventId: `evt-${this.eventCounter}`,
        sessionId,
        seq: String(session.events.length + 1),
        createdAt: new Date(this.clock).toISOString(),
        runId: draft.runId ?? null,
      } as StoredEvent;
      session.events.push(event);
      session.info.lastEventSeq = event.seq;
      stored.push(event);
    }
    return stored;
  }

  /** What the engine records when it revokes a pending approval (APPROVAL_DENIED, REVOKED). */
  async recordRevoked(
    sessionId: string,
    approval: {
      runId: string | null;
      approvalId: string;
      toolCallId: string;
      argumentHash: string;
    },
  ): Promise<void> {
    await this.append(sessionId, [
      {
        type: 'APPROVAL_DENIED',
        runId: approval.runId,
        approvalId: approval.approvalId,
        toolCallId: approval.toolCallId,
        argumentHash: approval.argumentHash,
        status: 'REVOKED',
        expiresAt: new Date(this.clock + 60_000).toISOString(),
      } as EventDraft,
    ]);
  }

  async hasForeignId(sessionId: string, foreignId: string): Promise<boolean> {
    return this.sessions.get(sessionId)?.foreignIds.has(foreignId) ?? false;
  }

  async findQuestion(sessionId: string, questionId: string): Promise<QuestionValue | null> {
    const events = this.sessions.get(sessionId)?.events ?? [];
    let found: QuestionValue | null = null;
    for (const event of events) {
      if (
        (event.type === 'STUDIO_QUESTION_ASKED' || event.type === 'STUDIO_QUESTION_ANSWERED') &&
        event.question.questionId === questionId
      )
        found = event.question;
    }
    return found;
  }

  async findApproval(
    sessionId: string,
    toolCallId: string,
  ): Promise<{ approvalId: string; status: ApprovalStatus; expiresAt: string } | null> {
    const events = this.sessions.get(sessionId)?.events ?? [];
    for (let i = events.length - 1; i >= 0; i -= 1) {
      const event = events[i];
      if (
        event?.type.startsWith('APPROVAL_') &&
        'approvalId' in event &&
        event.toolCallId === toolCallId
      ) {
        return { approvalId: event.approvalId, status: event.status, expiresAt: event.expiresAt };
      }
    }
    return null;
  }

  setStatus(status: SourceStatus, detail?: string | null): void {
    this.statuses.push({ status, detail: detail ?? null });
  }

  get lastStatus(): SourceStatus | undefined {
    return this.statuses.at(-1)?.status;
  }

  events(sessionId: string): StoredEvent[] {
    return this.sessions.get(sessionId)?.events ?? [];
  }

  types(sessionId: string): string[] {
    return this.events(sessionId).map((e) => e.type);
  }

  allEvents(): StoredEvent[] {
    return [...this.sessions.values()].flatMap((s) => s.events);
  }

  async waitFor(check: () => boolean, what = 'events', timeoutMs = 5000): Promise<void> {
    await waitUntil(check, timeoutMs, what);
  }
}
