/**
 * Approvals and decisions (rule module): a call that needs a human is proposed with its approval
 * in one commit; a decision (one or a batch, all or nothing) is checked (epoch, pending, exact
 * hash, expiry, single use, unchanged diff targets) and claimed in one transaction, then recorded
 * in another together with the outbox job that carries out what it authorizes (a 'decision'
 * job: the delivery to a foreign runtime, an engine tool, the demo agent's continuation). The
 * expiry sweep moves lapsed approvals out of PENDING by a conditional update; approval rules
 * decide new approvals inside the append that requested them.
 */
import { randomUUID } from 'node:crypto';
import { JOBS_CHANNEL } from './jobs.ts';
import type { JobRecord } from '../store/Store.ts';
import type { ApprovalRecord, SessionRecord, ToolCallRecord } from '../store/records.ts';
import type { EventDraft } from './eventDrafts.ts';
import type { Source, ToolDecision } from '../sources/Source.ts';
import { approvalFieldsOf } from './recordDrafts.ts';
import { revocationDrafts } from './approvalLifecycle.ts';
import { decidingRule, noteRuleUse } from './approvalRules.ts';
import { agentsStopped } from './agentPolicy.ts';
import type { DiffTarget, ProposedFileChange } from './proposalDiff.ts';
import { StudioError } from './StudioError.ts';
import { canonicalJson } from '../workspace/canonicalJson.ts';
import { sha256Digest } from '../workspace/manifest.ts';
import { ErrorCode, APPROVAL_TTL_MAX_MS, MAX_DECISION_REASON } from '../../protocol/contract.ts';
import { TERMINAL_TOOL_STATUSES } from '../../protocol/events.ts';
import { ENGINE_TOOLS, type AfterCommit, type EngineCore } from './core.ts';
import type { Projects } from './projects.ts';
import type { Restores } from './restores.ts';
import type { Sessions } from './sessions.ts';

/** How long a decision being checked and recorded holds its approval (see decidingClaim). */
const DECIDING_CLAIM_MS = 30_000;

/**
 * False for a source registered here that runs on another instance (LeasedSource's `runsHere`);
 * true for every other source.
 */
function runsHere(source: Source): boolean {
  return (source as { runsHere?: boolean }).runsHere !== false;
}

export interface DecideInput {
  sessionId: string;
  clientEpoch: string;
  toolCallId: string;
  argumentHash: string;
  reason?: string | null;
}

export interface ProposeInput {
  sessionId: string;
  runId: string | null;
  toolCallId?: string;
  toolName: string;
  toolVersion?: string;
  executor?: 'SERVER' | 'BROWSER';
  /** The full arguments; hashed into argumentHash and kept (canonical) on the tool call. */
  arguments: Record<string, unknown>;
  safeSummary: string;
  reasons: string[];
  ttlMs?: number;
  askedBy?: string | null;
  foreignId?: string;
  /**
   * The files the call would write (null content deletes). The engine diffs them against the
   * project folder, shows the diff on the card and binds the files' current hashes into the hash.
   */
  fileChanges?: ProposedFileChange[];
}

export interface DecisionsHost extends EngineCore {
  readonly projects: Pick<Projects, 'proposalDiff' | 'changedTargets'>;
  readonly restores: Pick<Restores, 'runEngineTool'>;
  readonly sessions: Pick<Sessions, 'endRun'>;
}

export class Decisions {
  constructor(private readonly h: DecisionsHost) {}

  /**
   * Rules applied right after a draft is folded, in the same commit: a new approval is revoked
   * while the kill switch is on, or decided by a matching approval rule; a run a runtime starts
   * while the kill switch is on is stopped after the commit.
   */
  async afterAppended(
    session: SessionRecord,
    draft: EventDraft,
    effects: AfterCommit[],
  ): Promise<EventDraft[]> {
    // Only these two types answer to the policy: the others skip its read (one per event).
    if (draft.type !== 'RUN_STARTED' && draft.type !== 'APPROVAL_REQUESTED') return [];
    const policy = await this.h.policy(session.appId);
    if (draft.type === 'RUN_STARTED' && agentsStopped(policy)) {
      effects.push({ kind: 'stopRun', sessionId: session.sessionId, runId: draft.runId });
      return [];
    }
    if (draft.type !== 'APPROVAL_REQUESTED') return [];
    const approval = await this.h.db.getApproval(draft.approvalId);
    if (!approval || approval.status !== 'PENDING') return [];
    if (agentsStopped(policy)) {
      effects.push({ kind: 'revoked', approval });
      return await revocationDrafts(this.h.db, approval, 'the kill switch is on');
    }
    const rule = await decidingRule(this.h.db, session, approval, this.h.now());
    if (!rule) return [];
    await noteRuleUse(this.h.db, rule, approval.toolCallId, this.h.iso());
    const ruledCall = await this.h.db.getToolCall(approval.toolCallId);
    if (ruledCall)
      // The runtime hears the rule's decision from the outbox, after this commit.
      await this.enqueueDecision(
        {
          sessionId: approval.sessionId,
          runId: approval.runId,
          toolCallId: ruledCall.toolCallId,
          toolName: ruledCall.toolName,
          approvalId: approval.approvalId,
          argumentHash: approval.argumentHash,
          approved: rule.effect === 'ALLOW',
          reason: rule.effect === 'ALLOW' ? null : `Denied by rule "${rule.name}".`,
        },
        true,
      );
    const base = {
      ...approvalFieldsOf(approval),
      studioRuleId: rule.ruleId,
      studioRuleName: rule.name,
      studioDecidedBy: null,
    };
    if (rule.effect === 'ALLOW') return [{ type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base }];
    const call = await this.h.db.getToolCall(approval.toolCallId);
    const message = `Denied by rule "${rule.name}".`;
    return [
      { type: 'APPROVAL_DENIED', status: 'DENIED', decisionReason: message, ...base },
      ...(call
        ? [
            {
              type: 'TOOL_DENIED' as const,
              runId: approval.runId,
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              toolVersion: call.toolVersion,
              status: 'DENIED' as const,
              error: { code: ErrorCode.APPROVAL_DENIED, message, retryable: false },
            },
          ]
        : []),
    ];
  }

  async tellRevoked(approval: ApprovalRecord): Promise<void> {
    const call = await this.h.db.getToolCall(approval.toolCallId);
    if (!call || ENGINE_TOOLS.has(call.toolName)) return;
    (await this.h.sourceOf(approval.sessionId))?.onApprovalRevoked?.({
      sessionId: approval.sessionId,
      runId: approval.runId,
      toolCallId: approval.toolCallId,
      toolName: call.toolName,
      approvalId: approval.approvalId,
      argumentHash: approval.argumentHash,
    });
  }

  /**
   * sha256 of the canonical binding of the call to its session, arguments and context, and,
   * for a call with a diff, of each target file with the hash it had when the diff was made.
   */
  argumentHash(
    sessionId: string,
    toolCallId: string,
    toolName: string,
    args: unknown,
    contextVersion: string,
    diffTargets?: DiffTarget[],
  ): string {
    return sha256Digest(
      canonicalJson({
        arguments: args,
        contextVersion,
        sessionId,
        toolCallId,
        toolName,
        ...(diffTargets && diffTargets.length > 0 ? { diffTargets } : {}),
      }),
    );
  }

  /**
   * Proposes a tool call that needs a human: TOOL_PROPOSED (WAITING_FOR_APPROVAL) then
   * APPROVAL_REQUESTED, in one commit. Returns the approval (already decided when a rule
   * matched, revoked when the kill switch is on).
   */
  async proposeWithApproval(input: ProposeInput): Promise<ApprovalRecord> {
    const session = await this.h.requireSession(input.sessionId);
    const toolCallId = input.toolCallId ?? `tc_${randomUUID()}`;
    const argumentsJson = canonicalJson(input.arguments);
    const diffed = input.fileChanges
      ? await this.h.projects.proposalDiff(session.sessionId, input.fileChanges)
      : null;
    const argumentHash = this.argumentHash(
      session.sessionId,
      toolCallId,
      input.toolName,
      input.arguments,
      session.contextVersion,
      diffed?.targets,
    );
    const approvalId = `ap_${randomUUID()}`;
    const ttl = Math.min(input.ttlMs ?? this.h.approvalTtlMs, APPROVAL_TTL_MAX_MS);
    const expiresAt = this.h.iso(this.h.now() + ttl);
    await this.h.append(session.sessionId, [
      {
        type: 'TOOL_PROPOSED',
        runId: input.runId,
        toolCallId,
        toolName: input.toolName,
        toolVersion: input.toolVersion ?? '1.0.0',
        status: 'WAITING_FOR_APPROVAL',
        executor: input.executor ?? 'SERVER',
        safeSummary: input.safeSummary,
        argumentHash,
        argumentsJson,
        contextVersion: session.contextVersion,
        askedBy: input.askedBy ?? null,
        ...(diffed ? { studioDiff: diffed.diff } : {}),
        ...(input.foreignId ? { foreignId: input.foreignId } : {}),
      },
      {
        type: 'APPROVAL_REQUESTED',
        runId: input.runId,
        approvalId,
        toolCallId,
        argumentHash,
        status: 'PENDING',
        safeSummary: input.safeSummary,
        reasons: input.reasons,
        expiresAt,
      },
    ]);
    const approval = await this.h.db.getApproval(approvalId);
    if (!approval) throw new Error('approval vanished');
    return approval;
  }

  /** ApproveTool / RejectTool: a batch of one (see decideBatch). */
  async decide(
    input: DecideInput,
    approved: boolean,
    decidedBy: string | null = null,
  ): Promise<ApprovalRecord> {
    const [result] = await this.decideBatch([{ ...input, approve: approved }], decidedBy, false);
    if (!result) throw new Error('decision vanished');
    return result;
  }

  /** Finds and checks one decision; throws the StudioError that refuses it. */
  private async checkDecision(input: DecideInput & { approve: boolean }): Promise<{
    session: SessionRecord;
    call: ToolCallRecord;
    approval: ApprovalRecord;
  }> {
    const session = await this.h.requireSession(input.sessionId);
    const call = await this.h.db.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        `No tool call ${input.toolCallId} in this session.`,
      );
    const approval = call.approvalId ? await this.h.db.getApproval(call.approvalId) : null;
    if (!approval)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'This tool call has no approval to decide.',
      );
    // A revoked approval says so whatever else changed (closed session, lapsed control).
    if (approval.status === 'REVOKED') this.checkDecidable(approval, input.argumentHash);
    await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    this.checkDecidable(approval, input.argumentHash);
    return { session, call, approval };
  }

  /**
   * studioDecideTools (and ApproveTool / RejectTool as a batch of one). All or nothing: every
   * decision is checked (epoch, pending approval, exact hash, expiry, single use, unchanged diff
   * targets) before any is applied; if one fails, none is applied and the error names each
   * failing item (`extensions.items`). They are checked again and recorded in one commit
   * together with one outbox job each; the job delivers the decision to a foreign runtime and
   * carries out what it authorizes after the commit (runDecisionJob).
   */
  async decideBatch(
    inputs: (DecideInput & { approve: boolean })[],
    decidedBy: string | null,
    wrapErrors = true,
  ): Promise<ApprovalRecord[]> {
    if (inputs.length === 0 || inputs.length > 100)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'A batch holds 1 to 100 decisions.', {
        field: 'decisions',
      });
    const refuse = (failures: { index: number; error: StudioError }[]): never => {
      if (!wrapErrors && failures.length === 1) throw failures[0]!.error;
      const items = failures.map(({ index, error }) => ({
        index,
        toolCallId: inputs[index]!.toolCallId,
        sessionId: inputs[index]!.sessionId,
        code: error.code,
        message: error.message,
      }));
      throw new StudioError(
        failures[0]!.error.code,
        `Nothing was decided: ${items.length} of ${inputs.length} decision(s) failed: ` +
          items.map((i) => `#${i.index + 1} ${i.toolCallId}: ${i.code}: ${i.message}`).join('; '),
        {
          extensions: { items },
          remediation: 'Review the named calls again; the rest are unchanged.',
        },
      );
    };
    const asStudioError = (error: unknown) =>
      error instanceof StudioError ? error : new StudioError(ErrorCode.BAD_REQUEST, String(error));
    const checkAll = async () => {
      const failures: { index: number; error: StudioError }[] = [];
      const checked: (Awaited<ReturnType<Decisions['checkDecision']>> | null)[] = [];
      for (const [index, input] of inputs.entries()) {
        try {
          checked.push(await this.checkDecision(input));
        } catch (error) {
          failures.push({ index, error: asStudioError(error) });
          checked.push(null);
        }
      }
      return { checked, failures };
    };
    const inProgress = () =>
      new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Another decision for this approval is in progress; approvals are used once.',
      );
    // The sessions' row locks first (in one order), then the checks: on PostgreSQL a read made
    // before the lock may predate a decision another instance recorded meanwhile, and claiming
    // from it would put a decided approval back to PENDING (a second grant).
    const lockSessions = async () => {
      for (const sessionId of [...new Set(inputs.map((i) => i.sessionId))].sort())
        await this.h.db.lockSession(sessionId);
    };
    // Checked and claimed in one transaction: the claim is stored on the approval, so a second
    // decision (from this process or another instance) is refused until this one is recorded.
    const claim = randomUUID();
    const checked = await this.h.kernel.write(async () => {
      await lockSessions();
      const first = await checkAll();
      const seen = new Set<string>();
      const now = this.h.now();
      for (const [index, c] of first.checked.entries()) {
        if (!c) continue;
        const claimed = c.approval.decidingClaim && c.approval.decidingClaim.untilMs > now;
        if (seen.has(c.approval.approvalId) || claimed)
          first.failures.push({ index, error: inProgress() });
        seen.add(c.approval.approvalId);
      }
      if (first.failures.length > 0) refuse(first.failures.sort((a, b) => a.index - b.index));
      const all = first.checked as NonNullable<(typeof first.checked)[number]>[];
      // A conditional update (still PENDING) takes the claim: never an overwrite of a decision.
      for (const [index, c] of all.entries())
        if (
          !(await this.h.db.decideApproval({
            ...c.approval,
            decidingClaim: { claim, untilMs: now + DECIDING_CLAIM_MS },
          }))
        )
          refuse([{ index, error: inProgress() }]);
      return all;
    });
    let recorded = false;
    try {
      // A target file that changed since its diff was shown: refuse, and revoke that approval.
      const stale: { index: number; error: StudioError }[] = [];
      for (const [index, c] of checked.entries()) {
        const changed = inputs[index]!.approve ? await this.h.projects.changedTargets(c.call) : [];
        if (changed.length === 0) continue;
        await this.h.append(
          c.session.sessionId,
          await revocationDrafts(
            this.h.db,
            c.approval,
            `${changed.join(', ')} changed since the diff was shown`,
          ),
        );
        await this.tellRevoked(c.approval);
        stale.push({
          index,
          error: new StudioError(
            ErrorCode.APPROVAL_MISMATCH,
            `${changed.join(', ')} changed on disk since the diff was shown; the approval was revoked and the call did not run.`,
            { field: 'argumentHash', remediation: 'Ask again to see the current diff.' },
          ),
        });
      }
      if (stale.length > 0) refuse(stale);
      const decisions = checked.map((c, index): ToolDecision => {
        const reason = inputs[index]!.reason
          ? inputs[index]!.reason!.slice(0, MAX_DECISION_REASON)
          : null;
        return {
          sessionId: c.session.sessionId,
          runId: c.approval.runId,
          toolCallId: c.call.toolCallId,
          toolName: c.call.toolName,
          approvalId: c.approval.approvalId,
          argumentHash: c.approval.argumentHash,
          approved: inputs[index]!.approve,
          reason,
        };
      });
      // Recorded in one commit with what follows each decision (a job): re-checked inside it
      // (an approval may have lapsed or the epoch moved meanwhile), and each approval moves out
      // of PENDING by a conditional update, so of two racing decisions one is recorded.
      const result = await this.h.kernel.write(async () => {
        await lockSessions();
        const again = await checkAll();
        for (const [index, c] of again.checked.entries())
          if (c && c.approval.decidingClaim?.claim !== claim)
            again.failures.push({ index, error: inProgress() });
        if (again.failures.length > 0) refuse(again.failures);
        const decidedAt = this.h.iso();
        for (const decision of decisions) {
          const current = (await this.h.db.getApproval(decision.approvalId))!;
          const won = await this.h.db.decideApproval({
            ...current,
            status: decision.approved ? 'GRANTED' : 'DENIED',
            decidedAt,
            decidingClaim: null,
          });
          if (!won) refuse([{ index: decisions.indexOf(decision), error: inProgress() }]);
          const base = { ...approvalFieldsOf(current), studioDecidedBy: decidedBy };
          const call = (await this.h.db.getToolCall(decision.toolCallId))!;
          if (decision.approved) {
            await this.h.append(decision.sessionId, [
              { type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base },
            ]);
          } else {
            const who = decidedBy && decidedBy !== 'owner' ? decidedBy : 'a human';
            await this.h.append(decision.sessionId, [
              {
                type: 'APPROVAL_DENIED',
                status: 'DENIED',
                decisionReason: decision.reason,
                ...base,
              },
              {
                type: 'TOOL_DENIED',
                runId: current.runId,
                toolCallId: call.toolCallId,
                toolName: call.toolName,
                toolVersion: call.toolVersion,
                status: 'DENIED',
                error: {
                  code: ErrorCode.APPROVAL_DENIED,
                  message: decision.reason
                    ? `Denied by ${who}: ${decision.reason}`
                    : `Denied by ${who}.`,
                  retryable: false,
                },
              },
            ]);
          }
          // The runtime hears the decision, and what it authorizes runs, from the outbox, after
          // this commit: a crash after the commit leaves the job, never a lost delivery.
          await this.enqueueDecision(decision, true);
        }
        const out: ApprovalRecord[] = [];
        for (const d of decisions) out.push((await this.h.db.getApproval(d.approvalId))!);
        return out;
      });
      recorded = true;
      this.h.fault('decision-committed');
      return result;
    } finally {
      if (!recorded) await this.releaseClaims(checked, claim);
    }
  }

  /** Ends this decision's claims on approvals it did not decide (a refusal, a changed target). */
  private async releaseClaims(
    checked: { approval: ApprovalRecord }[],
    claim: string,
  ): Promise<void> {
    try {
      await this.h.kernel.write(async () => {
        for (const c of checked) {
          await this.h.db.lockSession(c.approval.sessionId);
          const current = await this.h.db.getApproval(c.approval.approvalId);
          if (current?.status === 'PENDING' && current.decidingClaim?.claim === claim)
            await this.h.db.decideApproval({ ...current, decidingClaim: null });
        }
      });
    } catch (error) {
      // The claims lapse by themselves (DECIDING_CLAIM_MS).
      this.h.logger.warn('could not release decision claims', { error: String(error) });
    }
  }

  /**
   * Enqueues what follows a recorded decision, in the decision's transaction. `deliver`: the
   * foreign runtime is told by the job (a job of an older server may carry `false`: it told the
   * runtime before recording).
   */
  private async enqueueDecision(decision: ToolDecision, deliver: boolean): Promise<void> {
    await this.h.db.enqueueJob({
      kind: 'decision',
      key: `decision:${decision.approvalId}`,
      payload: JSON.stringify({ decision, deliver }),
    });
    this.h.db.notify(JOBS_CHANNEL, 'decision');
  }

  /**
   * The 'decision' job, run by the outbox worker after the decision committed, and again after a
   * crash (so each step is idempotent): the foreign runtime hears the decision, then
   * afterDecision. A granted call the runtime already moved on (it took the decision before the
   * crash) is not told again; a runtime that refuses the decision ends the call with an event, so
   * a granted call never waits forever.
   */
  async runDecisionJob(job: JobRecord): Promise<void> {
    const { decision, deliver } = JSON.parse(job.payload) as {
      decision: ToolDecision;
      deliver: boolean;
    };
    const source = await this.h.sourceOf(decision.sessionId);
    const engineTool = ENGINE_TOOLS.has(decision.toolName);
    // A source that runs here hears the decision under the session's lock (deliverInOrder); one
    // on another instance is called through the database and orders it there (LeasedSource).
    if (source && !engineTool && !source.continueDecision && runsHere(source)) {
      const refused = await this.deliverInOrder(source, decision, deliver, true);
      if (refused) await this.deliveryRefused(decision, refused.error, job.attempts > 1);
      return;
    }
    if (deliver && !engineTool && source?.deliverDecision) {
      if (!(await this.movedOn(decision))) {
        try {
          await source.deliverDecision(decision);
        } catch (error) {
          await this.deliveryRefused(decision, error, job.attempts > 1);
          return;
        }
        this.h.fault('delivery-sent');
        // Forwarded: the instance running the source told it in order, its hook included.
        if (!source.continueDecision) return;
      }
    }
    await this.afterDecision(decision);
  }

  /**
   * Whether the runtime already acted on a grant (a delivery before a crash): a grant moves the
   * call on only once the runtime acts on it (TOOL_DISPATCHED, its end), so it is not told again.
   */
  private async movedOn(decision: ToolDecision): Promise<boolean> {
    if (!decision.approved) return false;
    const call = await this.h.db.getToolCall(decision.toolCallId);
    return call?.status !== 'WAITING_FOR_APPROVAL';
  }

  /**
   * Tells a source that runs on this instance a recorded decision, in order: its
   * `prepareDecision` first, committed on its own; then one transaction
   * holds the session (its row lock on PostgreSQL, the one writer on SQLite) from before the
   * runtime hears the decision until what the source records of it (the confirmation it sent,
   * TOOL_DISPATCHED from `onDecisionRecorded`, appended "later" included: `writeSettled`) is
   * written, so what the runtime does next (the call's result, which the bridge appends to the
   * same session) can only commit after the dispatch. A grant the runtime already moved on (it
   * took the decision before a crash) is not told again. Returns the runtime's refusal, if any
   * (the caller ends the call); the source's hook then does not run. A transaction run again
   * after a conflict tells the source again, which refuses or ignores a decision it already
   * took (Source.deliverDecision).
   */
  async deliverInOrder(
    source: Source,
    decision: ToolDecision,
    deliver: boolean,
    faults = false,
  ): Promise<{ error: unknown } | null> {
    // What the source records before the runtime hears the decision (its pre-image checkpoint)
    // commits first, in its own transactions: inside the one below it would commit only after
    // the runtime had heard, and perhaps acted on, the decision.
    if (deliver && source.deliverDecision && source.prepareDecision) {
      if (!(await this.movedOn(decision))) {
        try {
          await source.prepareDecision(decision);
        } catch (error) {
          return { error };
        }
      }
    }
    let refused: { error: unknown } | null = null;
    await this.h.kernel.writeSettled(async () => {
      refused = null;
      await this.h.db.lockSession(decision.sessionId);
      if (deliver && source.deliverDecision) {
        if (!(await this.movedOn(decision))) {
          try {
            await source.deliverDecision(decision);
          } catch (error) {
            refused = { error };
            return;
          }
          if (faults) this.h.fault('delivery-sent');
        }
      }
      source.onDecisionRecorded?.(decision);
    });
    return refused;
  }

  /**
   * The runtime did not take a recorded decision. A granted call ends: TOOL_FAILED on the first
   * attempt (the runtime refused it), TOOL_OUTCOME_UNKNOWN on a retry after a crash (it may have
   * taken the first attempt's delivery and no longer waits). Either way the timeline says why.
   */
  private async deliveryRefused(
    decision: ToolDecision,
    error: unknown,
    retried: boolean,
  ): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    await this.h.kernel.write(async () => {
      await this.h.db.lockSession(decision.sessionId);
      const approval = await this.h.db.getApproval(decision.approvalId);
      const call = await this.h.db.getToolCall(decision.toolCallId);
      const who = approval?.ruleName ? `Rule "${approval.ruleName}"` : 'The studio';
      const drafts: EventDraft[] = [
        {
          type: 'STUDIO_LOG',
          runId: decision.runId,
          level: 'warn',
          message: `${who} ${decision.approved ? 'approved' : 'denied'} ${decision.toolName}, but the runtime did not take the decision${retried ? ' after a restart' : ''}: ${message}`,
          origin: approval?.ruleName ? 'approval-rules' : 'decisions',
        },
      ];
      if (decision.approved && call && !TERMINAL_TOOL_STATUSES.has(call.status))
        drafts.push({
          type: retried ? 'TOOL_OUTCOME_UNKNOWN' : 'TOOL_FAILED',
          runId: call.runId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: retried ? 'OUTCOME_UNKNOWN' : 'FAILED',
          error: {
            code: ErrorCode.HOST_UNAVAILABLE,
            message: retried
              ? `The studio restarted while telling the runtime; it no longer waits for this decision (it may have run the call): ${message}`
              : `The runtime did not take the approval: ${message}`,
            retryable: false,
          },
        });
      await this.h.append(decision.sessionId, drafts);
    });
  }

  /** What follows a recorded decision: an engine tool runs (or its run ends); a source continues. */
  private async afterDecision(decision: ToolDecision): Promise<void> {
    if (ENGINE_TOOLS.has(decision.toolName)) {
      if (decision.approved) await this.h.restores.runEngineTool(decision.toolCallId);
      else if (decision.runId)
        await this.h.sessions.endRun(
          decision.sessionId,
          decision.runId,
          'RUN_FAILED',
          'The tool call was denied.',
          {
            code: ErrorCode.APPROVAL_DENIED,
            message: 'The tool call was denied.',
          },
        );
      return;
    }
    const source = await this.h.sourceOf(decision.sessionId);
    // A source whose continuation is durable carries it out inside this job (the demo agent).
    if (source?.continueDecision) await source.continueDecision(decision);
    else source?.onDecisionRecorded?.(decision);
  }

  /** Whether the source of `call` can propose it again ("Ask again" on an expired or revoked card). */
  async canAskAgain(call: ToolCallRecord): Promise<boolean> {
    const approval = call.approvalId ? await this.h.db.getApproval(call.approvalId) : null;
    if (!approval || (approval.status !== 'EXPIRED' && approval.status !== 'REVOKED')) return false;
    const session = await this.h.db.getSession(call.sessionId);
    if (!session || session.status !== 'ACTIVE' || session.currentRunId) return false;
    if (agentsStopped(await this.h.policy(session.appId))) return false;
    const source = this.h.source(session.source);
    return source?.canAskAgain?.(this.h.sessionInfo(session), call) ?? false;
  }

  /** studioAskAgain: the source proposes the expired or revoked call again (a new run and call). */
  async askAgain(input: {
    sessionId: string;
    clientEpoch: string;
    toolCallId: string;
    author?: string | null;
  }): Promise<ApprovalRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    await this.h.requireAgentsRunning(session.appId);
    const call = await this.h.db.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.TOOL_UNKNOWN,
        `No tool call ${input.toolCallId} in this session.`,
      );
    if (!(await this.canAskAgain(call)))
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'This call cannot be asked again now: only an expired or revoked call, between runs, of a source that can ask again.',
        { field: 'toolCallId' },
      );
    const source = this.h.source(session.source)!;
    const approvalId = await source.askAgain!(this.h.sessionInfo(session), call, {
      author: input.author ?? null,
    });
    const approval = await this.h.db.getApproval(approvalId);
    if (!approval) throw new Error('the source did not ask again');
    return approval;
  }

  private checkDecidable(approval: ApprovalRecord, argumentHash: string): void {
    if (approval.status === 'REVOKED')
      throw new StudioError(
        ErrorCode.APPROVAL_REVOKED,
        `The approval was revoked${approval.decisionReason ? ` (${approval.decisionReason.replace(/^Revoked: /, '').replace(/\.$/, '')})` : ''}; the call will not run.`,
        { remediation: 'Ask again if the agent should propose it anew.' },
      );
    if (
      approval.status === 'EXPIRED' ||
      (approval.status === 'PENDING' && Date.parse(approval.expiresAt) <= this.h.now())
    )
      throw new StudioError(
        ErrorCode.APPROVAL_EXPIRED,
        `The approval expired at ${approval.expiresAt}; the call will not run.`,
      );
    if (approval.status !== 'PENDING')
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        `The approval is ${approval.status}, not PENDING; approvals are used once.`,
      );
    if (approval.argumentHash !== argumentHash)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The argument hash does not match the pending approval: the call you saw is not the call that would run.',
        { field: 'argumentHash', remediation: 'Reload the tool call and review it again.' },
      );
  }

  /** Marks lapsed approvals EXPIRED; the call does not run. */
  async expireApprovals(): Promise<void> {
    const now = this.h.now();
    for (const approval of await this.h.db.listPendingApprovals(null)) {
      if (Date.parse(approval.expiresAt) > now) break;
      // A decision in progress holds the approval until it is recorded or refused.
      if (approval.decidingClaim && approval.decidingClaim.untilMs > now) continue;
      const call = await this.h.db.getToolCall(approval.toolCallId);
      const drafts: EventDraft[] = [
        { type: 'APPROVAL_EXPIRED', status: 'EXPIRED', ...approvalFieldsOf(approval) },
      ];
      const engineTool = call ? ENGINE_TOOLS.has(call.toolName) : false;
      if (call && engineTool) drafts.push(this.expiredToolDraft(call));
      const expired = await this.h.kernel.write(async () => {
        await this.h.db.lockSession(approval.sessionId);
        // Read again under the lock: a decision may have claimed it since the list was read.
        const current = await this.h.db.getApproval(approval.approvalId);
        if (current?.decidingClaim && current.decidingClaim.untilMs > now) return false;
        // Out of PENDING by a conditional update: a decision that won the race stands.
        const won = await this.h.db.decideApproval({
          ...(current ?? approval),
          status: 'EXPIRED',
          decidedAt: this.h.iso(),
          decidingClaim: null,
        });
        if (won) await this.h.append(approval.sessionId, drafts);
        return won;
      });
      if (!expired) continue;
      const source = await this.h.sourceOf(approval.sessionId);
      if (!engineTool && call)
        source?.onApprovalExpired?.({
          sessionId: approval.sessionId,
          runId: approval.runId,
          toolCallId: approval.toolCallId,
          toolName: call.toolName,
          approvalId: approval.approvalId,
          argumentHash: approval.argumentHash,
        });
    }
  }

  /** The TOOL_FAILED draft for a call whose approval lapsed (status CANCELLED, not DENIED). */
  expiredToolDraft(call: ToolCallRecord): EventDraft {
    return {
      type: 'TOOL_FAILED',
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      toolVersion: call.toolVersion,
      status: 'CANCELLED',
      error: {
        code: ErrorCode.APPROVAL_EXPIRED,
        message: 'The approval expired before anyone decided; the call did not run.',
        retryable: false,
      },
    };
  }
}
