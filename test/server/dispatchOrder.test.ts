/**
 * A tool call's dispatch is in the timeline before its result, whatever the runtime's speed:
 * the real server (SQLite, or PostgreSQL on server-pg) with a source whose runtime reports the
 * call's result while the confirmation's answer is still on its way back. The report comes from
 * the source's own flow (as a bridge's stream reader appends what the runtime sends), so only the
 * engine can hold it back: the outbox holds the session from before the runtime hears the
 * decision until the source recorded the confirmation and the dispatch (Decisions.deliverInOrder).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Source, SourceHost, ToolDecision } from '../../server/sources/Source.ts';
import type { StudioClient } from './harness.ts';
import type { EventDraft } from '../../server/engine/eventDrafts.ts';
import {
  APPROVE,
  attach,
  decideInput,
  keepAlive,
  makeClient,
  history,
  ok,
  startHarness,
  waitForEvent,
  type Harness,
} from './harness.ts';

const SESSION = 'race-1';
const RUN = 'run-race-1';
const CALL = 'call-race-1';
const HASH = `sha256:${'ab'.repeat(32)}`;
/** How long the confirmation's answer takes to come back after the runtime heard it. */
const ROUND_TRIP_MS = 40;

const tool = (type: 'TOOL_PROPOSED' | 'TOOL_DISPATCHED' | 'TOOL_SUCCEEDED', status: string) =>
  ({
    type,
    runId: RUN,
    toolCallId: CALL,
    toolName: 'bash',
    toolVersion: '1',
    status,
    argumentHash: HASH,
    ...(type === 'TOOL_PROPOSED'
      ? { safeSummary: 'bash: ls', argumentsJson: '{"command":"ls"}' }
      : {}),
    ...(type === 'TOOL_SUCCEEDED' ? { resultJson: '{"stdout":"a\\n"}' } : {}),
  }) as EventDraft;

/** A runtime that runs the call as soon as it hears the grant, and its bridge. */
class QuickRuntime implements Source {
  /** What deliverDecision was called with (the runtime heard it). */
  readonly delivered: ToolDecision[] = [];
  readonly sourceId = 'quick-runtime';
  readonly checkpointsSupported = false;
  private host: SourceHost | null = null;
  protected hostOf(): SourceHost {
    return this.host!;
  }
  private heard: () => void = () => undefined;
  /** The bridge's flow: started with the source, it appends what the runtime reports. */
  reported: Promise<unknown> = Promise.resolve();

  async start(host: SourceHost): Promise<void> {
    this.host = host;
    await host.ensureSession({
      sessionId: SESSION,
      title: 'A quick runtime',
      mode: 'BUILD',
      requestedModel: 'fake',
    });
    const granted = new Promise<void>((resolve) => (this.heard = resolve));
    this.reported = granted.then(() =>
      host.append(SESSION, [
        tool('TOOL_SUCCEEDED', 'SUCCEEDED'),
        { type: 'RUN_SUCCEEDED', runId: RUN } as EventDraft,
      ]),
    );
    await host.append(SESSION, [
      { type: 'RUN_STARTED', runId: RUN } as EventDraft,
      tool('TOOL_PROPOSED', 'WAITING_FOR_APPROVAL'),
      {
        type: 'APPROVAL_REQUESTED',
        runId: RUN,
        approvalId: `approval-${CALL}`,
        toolCallId: CALL,
        argumentHash: HASH,
        status: 'PENDING',
        safeSummary: 'bash: ls',
        reasons: ['The runtime asks'],
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      } as EventDraft,
    ]);
  }

  async deliverDecision(decision: ToolDecision): Promise<void> {
    this.delivered.push(decision);
    // The runtime hears the grant and runs the call; its answer to the confirmation comes later.
    if (decision.approved) this.heard();
    await new Promise((resolve) => setTimeout(resolve, ROUND_TRIP_MS));
    await this.host!.append(SESSION, [
      {
        type: 'STUDIO_LOG',
        runId: RUN,
        level: 'info',
        origin: this.sourceId,
        message: `Sent the confirmation for ${decision.toolCallId}`,
      } as EventDraft,
    ]);
  }

  /** As the bridges do: the dispatch appended "later", not awaited by the engine. */
  onDecisionRecorded(decision: ToolDecision): void {
    if (!decision.approved) return;
    void this.host!.append(SESSION, [tool('TOOL_DISPATCHED', 'DISPATCHED')]);
  }

  async stop(): Promise<void> {
    // A runtime never told of a grant reports nothing.
    if (this.delivered.some((d) => d.approved)) await this.reported.catch(() => undefined);
  }
}

/**
 * The same runtime with a bridge that records something before the runtime may hear a decision
 * (as a pre-image checkpoint is): it asks the studio, as any client would, what it serves of that
 * record at the moment the runtime hears the decision.
 */
class PreparingRuntime extends QuickRuntime {
  client: StudioClient | null = null;
  /** The session's STUDIO_LOG messages the studio served when the runtime heard the decision. */
  servedAtDelivery: string[] | null = null;
  failPrepare = false;

  async prepareDecision(decision: ToolDecision): Promise<void> {
    if (this.failPrepare) throw new Error('disk full');
    await this.hostOf().append(SESSION, [
      {
        type: 'STUDIO_LOG',
        runId: RUN,
        level: 'info',
        origin: this.sourceId,
        message: `Prepared ${decision.toolCallId}`,
      } as EventDraft,
    ]);
  }

  override async deliverDecision(decision: ToolDecision): Promise<void> {
    const events = await history(this.client!, SESSION);
    this.servedAtDelivery = events.flatMap((e) =>
      e.type === 'STUDIO_LOG' ? [String((e as { message?: unknown }).message)] : [],
    );
    await super.deliverDecision(decision);
  }
}

const disposers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

describe('the outbox orders a dispatch before the result the runtime reports', () => {
  it('grant, confirmation, dispatch, then the result and the end of the run; the call ends SUCCEEDED', async () => {
    const runtime = new QuickRuntime();
    const h: Harness = await startHarness({ demo: false, sources: [runtime] });
    disposers.push(() => h.dispose());
    const c = makeClient(h);
    const a = await attach(c, SESSION);
    h.track(keepAlive(c, a));
    const approved = await ok<{ crowdyStudioAgentApproveTool: { status: string } }>(
      c,
      APPROVE,
      decideInput(a, { toolCallId: CALL, argumentHash: HASH }),
    );
    expect(approved.crowdyStudioAgentApproveTool.status).toBe('GRANTED');
    const { events } = await waitForEvent(
      c,
      SESSION,
      (e) => e.type === 'RUN_SUCCEEDED',
      'the end of the run',
    );
    await runtime.reported;
    const granted = events.findIndex((e) => e.type === 'APPROVAL_GRANTED');
    expect(
      events
        .slice(granted)
        .filter((e) => !e.type.startsWith('CLIENT_'))
        .map((e) => e.type),
    ).toEqual([
      'APPROVAL_GRANTED',
      'STUDIO_LOG',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
      'RUN_SUCCEEDED',
    ]);
    expect((await h.server.engine.reads.getToolCall(CALL))?.status).toBe('SUCCEEDED');
    await h.server.engine.jobsIdle();
    expect(await h.server.engine.listJobs(['PENDING', 'CLAIMED'])).toEqual([]);
  });

  it('commits what the source prepares before the runtime hears the decision', async () => {
    const runtime = new PreparingRuntime();
    const h: Harness = await startHarness({ demo: false, sources: [runtime] });
    disposers.push(() => h.dispose());
    const c = makeClient(h);
    runtime.client = makeClient(h);
    const a = await attach(c, SESSION);
    h.track(keepAlive(c, a));
    await ok(c, APPROVE, decideInput(a, { toolCallId: CALL, argumentHash: HASH }));
    await waitForEvent(c, SESSION, (e) => e.type === 'RUN_SUCCEEDED', 'the end of the run');
    await runtime.reported;
    // Served to a client while the runtime was being told: committed, not merely written.
    expect(runtime.servedAtDelivery).toEqual([`Prepared ${CALL}`]);
    expect(runtime.delivered).toHaveLength(1);
  });

  it('tells the runtime nothing when preparing fails, and ends the granted call saying why', async () => {
    const runtime = new PreparingRuntime();
    runtime.failPrepare = true;
    const h: Harness = await startHarness({ demo: false, sources: [runtime] });
    disposers.push(() => h.dispose());
    const c = makeClient(h);
    const a = await attach(c, SESSION);
    h.track(keepAlive(c, a));
    await ok(c, APPROVE, decideInput(a, { toolCallId: CALL, argumentHash: HASH }));
    const { events } = await waitForEvent(
      c,
      SESSION,
      (e) => e.type === 'TOOL_FAILED',
      'the call to end',
    );
    const logs = events.flatMap((e) => (e.type === 'STUDIO_LOG' ? [String(e.message)] : []));
    expect(logs.some((m) => m.includes('did not take the decision: disk full'))).toBe(true);
    expect(runtime.delivered).toEqual([]);
    expect((await h.server.engine.reads.getToolCall(CALL))?.status).toBe('FAILED');
  });
});
