import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel } from '../engine/kernel.ts';
import type { Reads } from '../engine/kernel.ts';
import { SqliteStore } from '../store/SqliteStore.ts';
import type { TransactionOptions, Tx } from '../store/Store.ts';
import type { ApprovalRecord, ToolCallRecord } from '../store/records.ts';
import { parse } from 'graphql';
import type { FragmentDefinitionNode, OperationDefinitionNode, FieldNode } from 'graphql';
import { ExecutionReads, selectsToolCall } from './executionReads.ts';

const AT = '2026-01-01T00:00:00.000Z';

function call(toolCallId: string, approvalId: string | null = null): ToolCallRecord {
  return {
    toolCallId,
    sessionId: 's1',
    runId: null,
    toolName: 'read_file',
    toolVersion: '1',
    executor: null,
    status: 'SUCCEEDED',
    safeSummary: null,
    argumentHash: null,
    argumentsJson: null,
    resultJson: null,
    error: null,
    approvalId,
    askedBy: null,
    proposedAt: AT,
    updatedAt: AT,
    steps: [],
  };
}

function approval(approvalId: string, toolCallId: string): ApprovalRecord {
  return {
    approvalId,
    sessionId: 's1',
    toolCallId,
    runId: null,
    argumentHash: 'sha256:00',
    status: 'EXPIRED',
    safeSummary: 'a call',
    reasons: [],
    clientEpoch: '1',
    expiresAt: AT,
    decidedAt: AT,
    decisionReason: null,
    automatic: false,
  };
}

describe('ExecutionReads', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** A real store behind a real kernel, counting the read-only transactions it opens. */
  async function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'studio-reads-'));
    const store = new SqliteStore(join(dir, 'studio.db'));
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await store.transaction(async (tx) => {
      for (let i = 0; i < 30; i += 1) await tx.putToolCall(call(`c${i}`, i < 3 ? `a${i}` : null));
      for (let i = 0; i < 3; i += 1) await tx.putApproval(approval(`a${i}`, `c${i}`));
    });
    let readTransactions = 0;
    const transaction = store.transaction.bind(store);
    store.transaction = <T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions) => {
      if (opts?.readOnly) readTransactions += 1;
      return transaction(fn, opts);
    };
    const kernel = new Kernel(store);
    const engine = {
      snapshot: <T>(fn: (reads: Reads) => Promise<T>) => kernel.read((tx) => fn(tx)),
    };
    return { engine, reads: () => readTransactions };
  }

  it('reads what one pass asks for in one read transaction, each record once', async () => {
    const { engine, reads } = await setup();
    const execution = new ExecutionReads(engine);
    // One pass of an executor over a page: 60 links to 30 calls, and one unknown id.
    const asked = [...Array.from({ length: 60 }, (_, i) => `c${i % 30}`), 'c-missing'];
    const calls = await Promise.all(asked.map((id) => execution.toolCall(id)));
    expect(calls.map((c) => c?.toolCallId ?? null)).toEqual([...asked.slice(0, 60), null]);
    expect(reads()).toBe(1);
    // The second pass (each call's approval) is one more, and the first pass's records are not read again.
    const approvals = await Promise.all(
      calls.slice(0, 3).map((c) => execution.approval(c!.approvalId!)),
    );
    expect(approvals.map((a) => a?.status)).toEqual(['EXPIRED', 'EXPIRED', 'EXPIRED']);
    expect(await execution.toolCall('c0')).toBe(calls[0]);
    expect(reads()).toBe(2);
  });

  it('memoises a view per key, and a new execution reads afresh', async () => {
    const { engine, reads } = await setup();
    const first = new ExecutionReads(engine);
    let made = 0;
    const view = () =>
      first.once('tc:c1', async () => {
        made += 1;
        return { id: (await first.toolCall('c1'))?.toolCallId };
      });
    const [a, b] = await Promise.all([view(), view()]);
    expect(a).toBe(b);
    expect(made).toBe(1);
    await new ExecutionReads(engine).toolCall('c1');
    expect(reads()).toBe(2);
  });

  it('prefetches the calls a list of events embeds, and their approvals, in one read transaction', async () => {
    const { engine, reads } = await setup();
    const execution = new ExecutionReads(engine);
    const events = [
      { __typename: 'AgentMessageEvent', seq: '1' },
      ...Array.from({ length: 12 }, (_, i) => ({
        __typename: i % 2 ? 'AgentApprovalEvent' : 'AgentToolEvent',
        toolCallId: `c${i % 4}`,
      })),
      { __typename: 'AgentToolEvent', toolCallId: 'c-missing' },
      // Another member type's toolCallId is not a link to a call.
      { __typename: 'StudioLogEvent', toolCallId: 'c9' },
    ];
    expect(execution.peekToolCall('c0')).toBeUndefined();
    await Promise.all([execution.prefetch(events), execution.prefetch(events)]);
    expect(reads()).toBe(1);
    expect(execution.peekToolCall('c0')?.toolCallId).toBe('c0');
    expect(execution.peekToolCall('c3')?.toolCallId).toBe('c3');
    expect(execution.peekToolCall('c-missing')).toBeNull();
    expect(execution.peekToolCall('c9')).toBeUndefined();
    // c0..c2 have approvals a0..a2: read in the same transaction.
    expect(execution.peekApproval('a2')?.status).toBe('EXPIRED');
    // The asynchronous reads answer from the prefetch, with the same records.
    expect(await execution.toolCall('c1')).toBe(execution.peekToolCall('c1'));
    expect(await execution.approval('a0')).toBe(execution.peekApproval('a0'));
    expect(reads()).toBe(1);
    // A list whose calls are all known already opens no transaction.
    await execution.prefetch(events.slice(0, 5));
    expect(reads()).toBe(1);
  });

  it('tells whether a list field selects studioToolCall, through fragments and inline fragments', () => {
    const document = parse(`
      query Q {
        a: crowdyStudioAgentHistory(sessionId: "s") { events { ...E } }
        b: crowdyStudioAgentHistory(sessionId: "s") { events { __typename ... on AgentEventBase { seq } } }
        c: crowdyStudioAgentHistory(sessionId: "s") { events { ... on AgentToolEvent { studioToolCall { toolCallId } } } }
      }
      fragment E on CrowdyStudioAgentEvent { ...Base ... on AgentApprovalEvent { studioToolCall { status } } }
      fragment Base on CrowdyStudioAgentEvent { __typename ...Base2 }
      fragment Base2 on CrowdyStudioAgentEvent { ...Base }
    `);
    const fragments = Object.fromEntries(
      document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === 'FragmentDefinition')
        .map((d) => [d.name.value, d]),
    );
    const operation = document.definitions[0] as OperationDefinitionNode;
    const eventsOf = (i: number) =>
      (operation.selectionSet.selections[i] as FieldNode).selectionSet!.selections[0] as FieldNode;
    expect([0, 1, 2].map((i) => selectsToolCall({ fieldNodes: [eventsOf(i)], fragments }))).toEqual(
      [true, false, true],
    );
  });
});
