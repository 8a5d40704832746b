/**
 * The reads one execution (an HTTP request, or one subscription payload) makes for the records
 * its events link to: each tool call and approval is read once per execution, and the reads
 * asked for in one synchronous pass of the executor (a page of 200 events resolving
 * `studioToolCall`, then their calls' `approval`) run together in one read-only transaction
 * (`engine.snapshot`) instead of one transaction each. Measured: a 100,000-event replay opened
 * one read transaction per tool event (and three more per call for `studioCanAskAgain`); see
 * docs/ARCHITECTURE.md, "Why this shape".
 */
import type { Engine } from '../engine/Engine.ts';
import type { ApprovalRecord, ToolCallRecord } from '../store/records.ts';

type Kind = 'toolCall' | 'approval';
interface Wanted {
  kind: Kind;
  id: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class ExecutionReads {
  private readonly loaded = new Map<string, Promise<unknown>>();
  private wanted: Wanted[] = [];

  constructor(private readonly engine: Pick<Engine, 'snapshot'>) {}

  toolCall(toolCallId: string): Promise<ToolCallRecord | null> {
    return this.load('toolCall', toolCallId) as Promise<ToolCallRecord | null>;
  }

  approval(approvalId: string): Promise<ApprovalRecord | null> {
    return this.load('approval', approvalId) as Promise<ApprovalRecord | null>;
  }

  private readonly memo = new Map<string, unknown>();
  /** `load()` once per execution under `key` (the same view object for every event naming it). */
  once<T>(key: string, load: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, load());
    return this.memo.get(key) as T;
  }

  private load(kind: Kind, id: string): Promise<unknown> {
    const key = `${kind}:${id}`;
    let found = this.loaded.get(key);
    if (!found) {
      found = new Promise((resolve, reject) => {
        if (this.wanted.length === 0) queueMicrotask(() => void this.flush());
        this.wanted.push({ kind, id, resolve, reject });
      });
      this.loaded.set(key, found);
    }
    return found;
  }

  private async flush(): Promise<void> {
    const wanted = this.wanted;
    this.wanted = [];
    try {
      await this.engine.snapshot(async (reads) => {
        for (const w of wanted)
          w.resolve(
            w.kind === 'toolCall' ? await reads.getToolCall(w.id) : await reads.getApproval(w.id),
          );
      });
    } catch (error) {
      // Whatever was not answered fails (a closed store, say); the answered ones stand.
      for (const w of wanted) w.reject(error);
    }
  }
}
