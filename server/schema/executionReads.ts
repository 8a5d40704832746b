/**
 * The reads one execution (an HTTP request, or one subscription payload) makes for the records
 * its events link to: each tool call and approval is read once per execution, and the reads
 * asked for in one synchronous pass of the executor (a page of 200 events resolving
 * `studioToolCall`, then their calls' `approval`) run together in one read-only transaction
 * (`engine.snapshot`) instead of one transaction each. Measured: a 100,000-event replay opened
 * one read transaction per tool event (and three more per call for `studioCanAskAgain`); see
 * docs/ARCHITECTURE.md, "Why this shape".
 *
 * A list of events whose selection embeds `studioToolCall` is `prefetch`ed before its items are
 * executed: every call its tool and approval events name, and those calls' approvals, in one
 * snapshot, through two batched reads (`getToolCalls`, `getApprovals`). The resolvers then answer from `peek*` synchronously, so the executor completes each
 * embedded call without a promise per field (the embedded call was two thirds of a replay's
 * execution time while it resolved asynchronously).
 */
import { Kind } from 'graphql';
import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { Engine } from '../engine/Engine.ts';
import type { ApprovalRecord, ToolCallRecord } from '../store/records.ts';

type RecordKind = 'toolCall' | 'approval';
interface Wanted {
  kind: RecordKind;
  id: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The event types that embed a tool call (`studioToolCall`), by the id field they name it with. */
const EMBEDS_TOOL_CALL: ReadonlySet<string> = new Set(['AgentToolEvent', 'AgentApprovalEvent']);

/**
 * The ids of the tool calls `events`' tool and approval events name, each once, in order of
 * first mention: what a page's `studioToolCalls` lists.
 */
export function namedToolCallIds(
  events: readonly { __typename?: unknown; toolCallId?: unknown }[],
): string[] {
  const ids = new Set<string>();
  for (const event of events)
    if (EMBEDS_TOOL_CALL.has(event.__typename as string) && typeof event.toolCallId === 'string')
      ids.add(event.toolCallId);
  return [...ids];
}

export class ExecutionReads {
  private readonly loaded = new Map<string, Promise<unknown>>();
  /** Records already read in this execution (null: no such record), for synchronous answers. */
  private readonly known = new Map<string, unknown>();
  private wanted: Wanted[] = [];

  constructor(private readonly engine: Pick<Engine, 'snapshot'>) {}

  toolCall(toolCallId: string): Promise<ToolCallRecord | null> {
    return this.load('toolCall', toolCallId) as Promise<ToolCallRecord | null>;
  }

  approval(approvalId: string): Promise<ApprovalRecord | null> {
    return this.load('approval', approvalId) as Promise<ApprovalRecord | null>;
  }

  /** The call when this execution has read it already (null: it does not exist), else undefined. */
  peekToolCall(toolCallId: string): ToolCallRecord | null | undefined {
    return this.known.get(`toolCall:${toolCallId}`) as ToolCallRecord | null | undefined;
  }

  /** The approval when this execution has read it already (null: it does not exist), else undefined. */
  peekApproval(approvalId: string): ApprovalRecord | null | undefined {
    return this.known.get(`approval:${approvalId}`) as ApprovalRecord | null | undefined;
  }

  private readonly prefetched = new WeakMap<readonly unknown[], Promise<void>>();
  /**
   * Reads, in one snapshot, the calls that `events`' tool and approval events embed and those
   * calls' approvals (once per list). Resolves when `peekToolCall`/`peekApproval` answer for them.
   */
  prefetch(events: readonly { __typename?: unknown; toolCallId?: unknown }[]): Promise<void> {
    let done = this.prefetched.get(events);
    if (!done) {
      done = this.readAll(events);
      this.prefetched.set(events, done);
    }
    return done;
  }

  private async readAll(
    events: readonly { __typename?: unknown; toolCallId?: unknown }[],
  ): Promise<void> {
    const callIds = new Set<string>();
    for (const event of events)
      if (
        EMBEDS_TOOL_CALL.has(event.__typename as string) &&
        typeof event.toolCallId === 'string' &&
        !this.loaded.has(`toolCall:${event.toolCallId}`)
      )
        callIds.add(event.toolCallId);
    if (callIds.size === 0) return;
    const calls = new Map<string, ToolCallRecord | null>();
    const approvals = new Map<string, ApprovalRecord | null>();
    // Two batched reads (one query each on PostgreSQL, was one per call and approval).
    await this.engine.snapshot(async (reads) => {
      const found = await reads.getToolCalls([...callIds]);
      for (const id of callIds) calls.set(id, found.get(id) ?? null);
      const approvalIds = new Set<string>();
      for (const call of found.values())
        if (call.approvalId && !this.loaded.has(`approval:${call.approvalId}`))
          approvalIds.add(call.approvalId);
      if (approvalIds.size === 0) return;
      const foundApprovals = await reads.getApprovals([...approvalIds]);
      for (const id of approvalIds) approvals.set(id, foundApprovals.get(id) ?? null);
    });
    // Whatever a resolver asked for meanwhile keeps its own answer (the first read stands).
    for (const [id, call] of calls) this.settle('toolCall', id, call);
    for (const [id, approval] of approvals) this.settle('approval', id, approval);
  }

  private settle(kind: RecordKind, id: string, value: unknown): void {
    const key = `${kind}:${id}`;
    if (this.loaded.has(key)) return;
    this.known.set(key, value);
    this.loaded.set(key, Promise.resolve(value));
  }

  private readonly memo = new Map<string, unknown>();
  /** `load()` once per execution under `key` (the same view object for every event naming it). */
  once<T>(key: string, load: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, load());
    return this.memo.get(key) as T;
  }

  private load(kind: RecordKind, id: string): Promise<unknown> {
    const key = `${kind}:${id}`;
    let found = this.loaded.get(key);
    if (!found) {
      found = new Promise((resolve, reject) => {
        if (this.wanted.length === 0) queueMicrotask(() => void this.flush());
        this.wanted.push({ kind, id, resolve, reject });
      });
      this.loaded.set(key, found);
      found.then(
        (value) => this.known.set(key, value),
        () => undefined,
      );
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

const embedding = new WeakMap<FieldNode, boolean>();

/**
 * Whether the field being resolved (a list of events) selects `studioToolCall` on its items,
 * directly or through fragments: then the list is worth a `prefetch`. Answered once per field
 * node (a document's nodes live as long as its compiled form).
 */
export function selectsToolCall(
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
): boolean {
  const node = info.fieldNodes[0];
  if (!node) return false;
  let found = embedding.get(node);
  if (found === undefined) {
    const seen = new Set<string>();
    const walk = (set: SelectionSetNode | undefined): boolean =>
      !!set?.selections.some((s) => {
        if (s.kind === Kind.FIELD) return s.name.value === 'studioToolCall';
        if (s.kind === Kind.INLINE_FRAGMENT) return walk(s.selectionSet);
        if (seen.has(s.name.value)) return false;
        seen.add(s.name.value);
        return walk(info.fragments[s.name.value]?.selectionSet);
      });
    found = info.fieldNodes.some((n) => walk(n.selectionSet));
    embedding.set(node, found);
  }
  return found;
}
