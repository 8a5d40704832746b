import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel } from '../engine/kernel.ts';
import type { Reads } from '../engine/kernel.ts';
import { SqliteStore } from '../store/SqliteStore.ts';
import type { TransactionOptions, Tx } from '../store/Store.ts';
import type { ApprovalRecord, ToolCallRecord } from '../store/records.ts';
import { ExecutionReads } from './executionReads.ts';

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
});
