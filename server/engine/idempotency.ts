/**
 * Idempotency (rule module): a mutation runs once per (operation, idempotencyKey). The same key
 * with the same input returns the first result (stored as JSON); with another input it is
 * refused. The records live in the store, never in process memory:
 * - a mutation whose work is all the studio's own (LOCAL_OPERATIONS: attach, mode, checkpoints,
 *   rules, …) runs inside one write transaction and its record is written in that transaction:
 *   the effect and the record commit together or not at all;
 * - a mutation that waits on a runtime (a message, a decision delivered to a bridge, an answer)
 *   cannot hold a transaction open across the network: it first claims the key (a PENDING
 *   record, inserted: of two racing claims one wins, the other waits for its result), then runs,
 *   then replaces the claim with the result in one transaction. A failure deletes the claim.
 *   A claim older than PENDING_CLAIM_MS (its server stopped mid-way) is refused as in doubt.
 * - Heartbeat and AcknowledgeEvents write no record (UNRECORDED_OPERATIONS): repeating them is
 *   harmless by nature, and they are the bulk of all mutations.
 * Records older than the retention window are pruned (Engine.sweep; default 24 h,
 * `--idempotency-retention-hours` / STUDIO_IDEMPOTENCY_RETENTION_HOURS).
 */
import { StudioError } from './StudioError.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import { canonicalJson } from '../workspace/canonicalJson.ts';
import { sha256Digest } from '../workspace/manifest.ts';
import type { Kernel } from './kernel.ts';

/** Mutations that write no idempotency record. */
export const UNRECORDED_OPERATIONS: ReadonlySet<string> = new Set([
  'Heartbeat',
  'AcknowledgeEvents',
]);

/** Mutations that only touch the studio's own state: run in one transaction with their record. */
export const LOCAL_OPERATIONS: ReadonlySet<string> = new Set([
  'CreateSession',
  'AttachClient',
  'SetMode',
  'Pause',
  'Resume',
  'StudioCreateApprovalRule',
  'StudioUpdateApprovalRule',
  'StudioRevokeApprovalRule',
  'StudioCreateCheckpoint',
  'StudioRequestCheckpointRestore',
  'GrantLease',
  'RevokeLease',
  'ToolResult',
]);

/** The resultJson of a claim whose mutation is still running. */
const PENDING = '\u0000pending';
/** A claim older than this belongs to a server that stopped mid-way: its outcome is unknown. */
export const PENDING_CLAIM_MS = 120_000;
/** Default retention of idempotency records. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Channel of "an idempotency claim ended" (payload: operation NUL key). */
export const IDEMPOTENCY_CHANNEL = 'studio_idempotency';

export function conflict(operation: string): StudioError {
  return new StudioError(
    ErrorCode.IDEMPOTENCY_CONFLICT,
    `This idempotencyKey was already used for ${operation} with a different input.`,
    { field: 'idempotencyKey', remediation: 'Use a new idempotencyKey for a new action.' },
  );
}

function inDoubt(operation: string): StudioError {
  return new StudioError(
    ErrorCode.IDEMPOTENCY_CONFLICT,
    `The first ${operation} with this idempotencyKey was interrupted by a server stop; its outcome is unknown.`,
    {
      field: 'idempotencyKey',
      remediation:
        'Check the session history, then use a new idempotencyKey if it is still needed.',
    },
  );
}

function stripUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export class Idempotency {
  constructor(
    private readonly kernel: Kernel,
    private readonly now: () => number,
  ) {}

  async run<T>(
    operation: string,
    input: { idempotencyKey: string } & Record<string, unknown>,
    run: () => T | Promise<T>,
  ): Promise<T> {
    const { idempotencyKey, ...rest } = input;
    if (!idempotencyKey || idempotencyKey.length > 240)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'idempotencyKey must be 1 to 240 characters.', {
        field: 'idempotencyKey',
      });
    if (UNRECORDED_OPERATIONS.has(operation)) return run();
    const inputHash = sha256Digest(canonicalJson(stripUndefined(rest)));
    const record = (resultJson: string) => ({
      operation,
      key: idempotencyKey,
      inputHash,
      resultJson,
      createdAt: new Date(this.now()).toISOString(),
    });
    if (LOCAL_OPERATIONS.has(operation))
      // One transaction: the record commits with the effect. Two racing first calls: the second
      // insert conflicts, the transaction runs again and finds the first one's record.
      return this.kernel.write(async (tx) => {
        const existing = await tx.getIdempotency(operation, idempotencyKey);
        if (existing) return this.replay<T>(operation, existing, inputHash);
        const value = await run();
        await tx.putIdempotency(record(JSON.stringify(value)));
        return value;
      });

    for (;;) {
      const claimed = await this.kernel.write(async (tx) => {
        const existing = await tx.getIdempotency(operation, idempotencyKey);
        if (!existing) {
          await tx.putIdempotency(record(PENDING));
          return { mine: true as const };
        }
        return { mine: false as const, existing };
      });
      if (claimed.mine) break;
      const existing = claimed.existing;
      if (existing.resultJson !== PENDING) return this.replay<T>(operation, existing, inputHash);
      if (existing.inputHash !== inputHash) throw conflict(operation);
      if (this.now() - Date.parse(existing.createdAt) > PENDING_CLAIM_MS) throw inDoubt(operation);
      await this.waitForClaim(operation, idempotencyKey);
    }
    let value: T;
    try {
      value = await run();
    } catch (error) {
      await this.kernel.write(async (tx) => {
        await tx.deleteIdempotency(operation, idempotencyKey);
        tx.notify(IDEMPOTENCY_CHANNEL, `${operation}\u0000${idempotencyKey}`);
      });
      throw error;
    }
    await this.kernel.write(async (tx) => {
      await tx.deleteIdempotency(operation, idempotencyKey);
      await tx.putIdempotency(record(JSON.stringify(value)));
      tx.notify(IDEMPOTENCY_CHANNEL, `${operation}\u0000${idempotencyKey}`);
    });
    return value;
  }

  private replay<T>(
    operation: string,
    existing: { inputHash: string; resultJson: string },
    inputHash: string,
  ): T {
    if (existing.inputHash !== inputHash) throw conflict(operation);
    if (existing.resultJson === PENDING) throw inDoubt(operation);
    return JSON.parse(existing.resultJson) as T;
  }

  /** Resolves when the claim's owner ends it (its notification), or after a short poll. */
  private waitForClaim(operation: string, key: string): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        stop();
        clearTimeout(timer);
        resolve();
      };
      const stop = this.kernel.onNotification((n) => {
        if (n.channel === IDEMPOTENCY_CHANNEL && n.payload === `${operation}\u0000${key}`) done();
      });
      // A backstop only (the claim's owner notifies when it ends): a poll of the record.
      const timer = setTimeout(done, 250);
    });
  }

  /** Deletes records created more than `retentionMs` ago; returns how many. */
  prune(retentionMs: number): Promise<number> {
    const before = new Date(this.now() - retentionMs).toISOString();
    return this.kernel.write((tx) => tx.pruneIdempotency(before));
  }
}
