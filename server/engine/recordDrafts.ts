/**
 * Drafts that move an entity the store already holds: every APPROVAL_* event after the request
 * repeats the approval's recorded fields, and a lease ends with all of its grant's fields.
 */
import type { ApprovalRecord, LeaseRecord } from '../store/records.ts';
import type { ApprovalDraft, LeaseDraft } from './eventDrafts.ts';

/** The recorded fields of an approval that an APPROVAL_* draft carries besides type and status. */
export function approvalFieldsOf(
  approval: ApprovalRecord,
): Pick<
  ApprovalDraft,
  'runId' | 'approvalId' | 'toolCallId' | 'argumentHash' | 'safeSummary' | 'reasons' | 'expiresAt'
> {
  return {
    runId: approval.runId,
    approvalId: approval.approvalId,
    toolCallId: approval.toolCallId,
    argumentHash: approval.argumentHash,
    safeSummary: approval.safeSummary,
    reasons: approval.reasons,
    expiresAt: approval.expiresAt,
  };
}

/** A LEASE_REVOKED or LEASE_EXPIRED draft ending `lease` for `reason`. */
export function leaseEndedDraft(
  lease: LeaseRecord,
  type: 'LEASE_REVOKED' | 'LEASE_EXPIRED',
  reason: string,
): LeaseDraft {
  return {
    type,
    leaseId: lease.leaseId,
    kind: lease.kind,
    status: type === 'LEASE_REVOKED' ? 'REVOKED' : 'EXPIRED',
    clientEpoch: lease.clientEpoch,
    scopes: lease.scopes,
    holder: lease.holder,
    contextVersion: lease.contextVersion,
    expectedProjectRevision: lease.expectedProjectRevision,
    grantedAt: lease.grantedAt,
    expiresAt: lease.expiresAt,
    reason,
  };
}
