import { useEffect, useId, useRef, useState } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { attachmentStoreFor, errorCode, makeIdempotencyKey } from '../../graphql/attachment.ts';
import { Countdown } from '../../ui/Countdown.tsx';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { DecideToolsMutation, InboxDescriptorsQuery } from './documents.ts';
import type { PendingApprovalItem } from './usePendingApprovals.ts';

const button =
  'rounded px-3 py-1 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:opacity-50';

const HIGH = new Set(['DESTRUCTIVE', 'IRREVERSIBLE', 'ECONOMIC', 'TRUST_CONSENT', 'WORLD_CONTROL']);

function Risk({ sessionId, toolName }: { sessionId: string; toolName: string }) {
  const [{ data }] = useQuery({ query: InboxDescriptorsQuery, variables: { sessionId } });
  const risk = data?.crowdyStudioAgentToolDescriptors.tools.find((t) => t.name === toolName)?.risk;
  if (!risk) return <span className="text-xs text-slate-500">risk unknown</span>;
  return (
    <span
      className={`rounded px-1 text-xs ${HIGH.has(risk) ? 'bg-red-100 font-semibold text-red-900 dark:bg-red-950 dark:text-red-100' : 'bg-slate-100 dark:bg-slate-800'}`}
    >
      {risk}
    </span>
  );
}

interface Failure {
  index: number;
  toolCallId: string;
  code: string;
  message: string;
}

/**
 * The inbox's compact list: one row per pending call with a checkbox. "Approve selected" and
 * "Deny selected" show every selected call's summary, risk and exact hash in one confirmation;
 * the server applies the batch all or nothing and names each call that failed its checks.
 */
export function CompactInbox({
  items,
  sessionHref,
}: {
  items: readonly PendingApprovalItem[];
  sessionHref: (sessionId: string) => string;
}) {
  const headingId = useId();
  const client = useClient();
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirming, setConfirming] = useState<'approve' | 'deny' | null>(null);
  const [failures, setFailures] = useState<Failure[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [{ fetching }, decide] = useMutation(DecideToolsMutation);
  const confirmRef = useRef<HTMLButtonElement>(null);

  // Rows that left the inbox (decided elsewhere, revoked, expired) leave the selection too.
  const ids = new Set(items.map((i) => i.approval.approvalId));
  const chosen = items.filter((i) => selected.has(i.approval.approvalId));
  useEffect(() => {
    if (confirming) confirmRef.current?.focus();
  }, [confirming]);

  const toggle = (approvalId: string) =>
    setSelected((prev) => {
      const next = new Set([...prev].filter((id) => ids.has(id)));
      if (next.has(approvalId)) next.delete(approvalId);
      else next.add(approvalId);
      return next;
    });

  const send = async (approve: boolean) => {
    setProblem(null);
    setFailures(null);
    setDone(null);
    const store = attachmentStoreFor(client);
    const epochs = new Map<string, string>();
    try {
      for (const item of chosen)
        if (!epochs.has(item.session.sessionId))
          epochs.set(item.session.sessionId, await store.ensureAttached(item.session.sessionId));
    } catch (error) {
      setProblem(
        `Could not take control: ${error instanceof Error ? error.message : String(error)}`,
      );
      setConfirming(null);
      return;
    }
    const result = await decide({
      input: {
        idempotencyKey: makeIdempotencyKey('decideTools'),
        decisions: chosen.map((item) => ({
          sessionId: item.session.sessionId,
          clientEpoch: epochs.get(item.session.sessionId)!,
          toolCallId: item.approval.toolCallId,
          argumentHash: item.approval.argumentHash,
          approve,
        })),
      },
    });
    setConfirming(null);
    if (result.error) {
      const first = result.error.graphQLErrors[0];
      const list = first?.extensions?.items;
      if (Array.isArray(list)) setFailures(list as Failure[]);
      setProblem(`${errorCode(result.error) ?? 'Refused'}: nothing was decided.`);
      return;
    }
    setDone(
      `${approve ? 'Approved' : 'Denied'} ${chosen.length} ${chosen.length === 1 ? 'call' : 'calls'}.`,
    );
    setSelected(new Set());
  };

  const allChosen = items.length > 0 && chosen.length === items.length;
  return (
    <section aria-labelledby={headingId} className="space-y-2">
      <h2 id={headingId} className="sr-only">
        Approvals waiting for a decision
      </h2>
      <div className="flex flex-wrap items-center gap-2">
        <label className="flex items-center gap-1 text-sm">
          <input
            type="checkbox"
            checked={allChosen}
            onChange={() =>
              setSelected(allChosen ? new Set() : new Set(items.map((i) => i.approval.approvalId)))
            }
          />
          Select all
        </label>
        <button
          type="button"
          disabled={chosen.length === 0 || fetching}
          onClick={() => setConfirming('approve')}
          className={`${button} bg-emerald-700 text-white hover:bg-emerald-800`}
        >
          Approve selected ({chosen.length})
        </button>
        <button
          type="button"
          disabled={chosen.length === 0 || fetching}
          onClick={() => setConfirming('deny')}
          className={`${button} bg-red-700 text-white hover:bg-red-800`}
        >
          Deny selected ({chosen.length})
        </button>
        {done ? (
          <span role="status" className="text-sm text-emerald-800 dark:text-emerald-300">
            {done}
          </span>
        ) : null}
      </div>

      {confirming ? (
        <div
          role="alertdialog"
          aria-label={confirming === 'approve' ? 'Approve these calls' : 'Deny these calls'}
          className="space-y-2 rounded border border-blue-300 bg-blue-50 p-2 text-sm dark:border-blue-700 dark:bg-blue-950"
        >
          <p className="font-semibold">
            {confirming === 'approve' ? 'Approve' : 'Deny'} exactly these {chosen.length}{' '}
            {chosen.length === 1 ? 'call' : 'calls'}? All or none are applied.
          </p>
          <ol className="ml-5 list-decimal space-y-1">
            {chosen.map((item) => (
              <li key={item.approval.approvalId}>
                <SafeText text={item.toolCall.toolName} className="font-mono font-medium" />{' '}
                <Risk sessionId={item.session.sessionId} toolName={item.toolCall.toolName} />{' '}
                <SafeText text={item.approval.safeSummary} className="break-words" />
                <div className="font-mono text-xs break-all">
                  <SafeText text={item.approval.argumentHash} />
                </div>
              </li>
            ))}
          </ol>
          <div className="flex gap-2">
            <button
              ref={confirmRef}
              type="button"
              disabled={fetching}
              onClick={() => void send(confirming === 'approve')}
              className={`${button} ${confirming === 'approve' ? 'bg-emerald-700 hover:bg-emerald-800' : 'bg-red-700 hover:bg-red-800'} text-white`}
            >
              {confirming === 'approve' ? 'Approve' : 'Deny'} {chosen.length}{' '}
              {chosen.length === 1 ? 'call' : 'calls'}
            </button>
            <button
              type="button"
              onClick={() => setConfirming(null)}
              className={`${button} border border-slate-300 dark:border-slate-600`}
            >
              Cancel
            </button>
          </div>
        </div>
      ) : null}

      {problem ? (
        <div
          role="alert"
          className="rounded bg-red-100 p-2 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
        >
          <SafeText text={problem} />
          {failures ? (
            <ul className="ml-5 list-disc">
              {failures.map((f) => (
                <li key={f.index}>
                  <code className="font-mono">{f.code}</code> <SafeText text={f.toolCallId} />:{' '}
                  <SafeText text={f.message} />
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}

      <ul
        aria-label="Pending approvals"
        className="divide-y divide-slate-200 rounded border border-slate-200 dark:divide-slate-700 dark:border-slate-700"
      >
        {items.map((item) => (
          <li key={item.approval.approvalId} className="flex items-start gap-2 p-2 text-sm">
            <input
              type="checkbox"
              aria-label={`Select ${item.toolCall.toolName} of ${item.session.studioTitle ?? item.session.sessionId}`}
              checked={selected.has(item.approval.approvalId)}
              onChange={() => toggle(item.approval.approvalId)}
              className="mt-1"
            />
            <div className="min-w-0 flex-1">
              <p className="flex flex-wrap items-center gap-2">
                <SafeText text={item.toolCall.toolName} className="font-mono font-medium" />
                <Risk sessionId={item.session.sessionId} toolName={item.toolCall.toolName} />
                <Link
                  to={sessionHref(item.session.sessionId)}
                  className="text-blue-700 underline dark:text-blue-300"
                >
                  <SafeText text={item.session.studioTitle ?? item.session.sessionId} />
                </Link>
                <span className="text-xs">
                  expires in <Countdown to={item.approval.expiresAt} />
                </span>
              </p>
              <p className="truncate text-slate-700 dark:text-slate-300">
                <SafeText text={item.approval.safeSummary} />
              </p>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
