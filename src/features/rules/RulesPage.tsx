import { useEffect, useId, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import { errorCode, makeIdempotencyKey } from '../../graphql/attachment.ts';
import type { ResultOf } from '../../graphql/graphql.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { timeOfDay } from '../../ui/timeOfDay.ts';
import {
  ApprovalRulesQuery,
  RevokeApprovalRuleMutation,
  UpdateApprovalRuleMutation,
} from './documents.ts';
import { EFFECT_LABEL, MATCH_LABEL, SCOPE_LABEL } from './labels.ts';

type Rule = ResultOf<typeof ApprovalRulesQuery>['studioApprovalRules'][number];

const button =
  'rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 disabled:opacity-50 dark:border-slate-600 dark:hover:bg-slate-800';

function when(at: string | null): string {
  return at ? `${new Date(at).toLocaleDateString()} ${timeOfDay(at)}` : '—';
}

function matchWords(rule: Rule): string {
  if (rule.match === 'ARGUMENT_PREFIX')
    return `${rule.argumentName ?? '?'} starts with “${rule.argumentPrefix ?? ''}”`;
  return MATCH_LABEL[rule.match];
}

function scopeWords(rule: Rule): string {
  const id = rule.sessionId ?? rule.projectId ?? rule.sourceId;
  return id ? `${SCOPE_LABEL[rule.scope]} (${id})` : SCOPE_LABEL[rule.scope];
}

/** Every approval rule with its match count and last use; edit (name, expiry, prefix) and revoke. */
export function RulesPage() {
  const headingId = useId();
  const [{ data, error, fetching }] = useQuery({
    query: ApprovalRulesQuery,
    variables: { appId: LOCAL_APP_ID },
    requestPolicy: 'cache-and-network',
  });
  useEffect(() => {
    const previous = document.title;
    document.title = 'Approval rules · Agent Studio';
    return () => {
      document.title = previous;
    };
  }, []);
  const rules = data?.studioApprovalRules ?? [];
  const active = rules.filter((r) => r.active);
  const inactive = rules.filter((r) => !r.active);
  return (
    <section aria-labelledby={headingId} className="mx-auto max-w-5xl space-y-4 p-4">
      <header>
        <h1 id={headingId} className="text-xl font-semibold">
          Approval rules
        </h1>
        <p className="text-sm text-slate-600 dark:text-slate-400">
          Rules decide a call the moment it asks, for every source. Deny wins over allow; a rule
          allows a destructive call only if it says so. Make one from any tool-call card with
          “Always allow…” or “Always deny…”.
        </p>
      </header>
      {error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          Could not load the rules: <SafeText text={error.message} />
        </p>
      ) : null}
      {fetching && !data ? <p role="status">Loading rules…</p> : null}
      {data && rules.length === 0 ? (
        <p className="rounded border border-dashed border-slate-300 p-4 text-sm dark:border-slate-700">
          No rules yet. Every call that asks waits for a person.
        </p>
      ) : null}
      {active.length > 0 ? <RuleTable caption="Active rules" rules={active} /> : null}
      {inactive.length > 0 ? (
        <RuleTable caption="Revoked and expired rules" rules={inactive} />
      ) : null}
    </section>
  );
}

function RuleTable({ caption, rules }: { caption: string; rules: readonly Rule[] }) {
  return (
    <table className="w-full border-collapse text-left text-sm">
      <caption className="mb-1 text-left font-semibold">{caption}</caption>
      <thead>
        <tr className="border-b border-slate-300 dark:border-slate-600">
          <th className="p-1">Rule</th>
          <th className="p-1">Tool and match</th>
          <th className="p-1">Scope</th>
          <th className="p-1">Matches</th>
          <th className="p-1">Last use</th>
          <th className="p-1">Expires</th>
          <th className="p-1">Actions</th>
        </tr>
      </thead>
      <tbody>
        {rules.map((rule) => (
          <RuleRow key={rule.ruleId} rule={rule} />
        ))}
      </tbody>
    </table>
  );
}

function RuleRow({ rule }: { rule: Rule }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(rule.name);
  const [prefix, setPrefix] = useState(rule.argumentPrefix ?? '');
  const [expiresAt, setExpiresAt] = useState(rule.expiresAt ? rule.expiresAt.slice(0, 16) : '');
  const [problem, setProblem] = useState<string | null>(null);
  const [, update] = useMutation(UpdateApprovalRuleMutation);
  const [{ fetching: revoking }, revoke] = useMutation(RevokeApprovalRuleMutation);
  const fail = (e: Parameters<typeof errorCode>[0]) =>
    setProblem(`${errorCode(e) ?? 'Refused'}: ${e?.graphQLErrors[0]?.message ?? e?.message ?? ''}`);
  return (
    <tr className="border-b border-slate-200 align-top dark:border-slate-700">
      <td className="p-1">
        <span
          className={`mr-1 rounded px-1 text-xs font-semibold ${rule.effect === 'ALLOW' ? 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100' : 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-100'}`}
        >
          {EFFECT_LABEL[rule.effect]}
        </span>
        {editing ? (
          <input
            aria-label="Rule name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            className="w-56 rounded border border-slate-300 px-1 dark:border-slate-600 dark:bg-slate-900"
          />
        ) : (
          <SafeText text={rule.name} className="font-medium" />
        )}
        <div className="text-xs text-slate-600 dark:text-slate-400">
          by <SafeText text={rule.createdBy ?? 'unknown'} />
          {rule.status === 'REVOKED' ? (
            <>
              {' '}
              · revoked by <SafeText text={rule.revokedBy ?? 'unknown'} /> {when(rule.revokedAt)}
            </>
          ) : null}
          {rule.allowDestructive ? ' · may allow destructive calls' : ''}
        </div>
        {problem ? (
          <p role="alert" className="text-xs text-red-800 dark:text-red-300">
            <SafeText text={problem} />
          </p>
        ) : null}
      </td>
      <td className="p-1">
        <SafeText text={rule.toolName} className="font-mono" />
        <div className="text-xs">
          {editing && rule.match === 'ARGUMENT_PREFIX' ? (
            <input
              aria-label="Prefix"
              value={prefix}
              onChange={(e) => setPrefix(e.target.value)}
              className="w-40 rounded border border-slate-300 px-1 font-mono dark:border-slate-600 dark:bg-slate-900"
            />
          ) : (
            <SafeText text={matchWords(rule)} />
          )}
        </div>
      </td>
      <td className="p-1 text-xs">
        <SafeText text={scopeWords(rule)} />
      </td>
      <td className="p-1">{rule.matchCount}</td>
      <td className="p-1 text-xs">{when(rule.lastUsedAt)}</td>
      <td className="p-1 text-xs">
        {editing ? (
          <input
            type="datetime-local"
            aria-label="Expires at"
            value={expiresAt}
            onChange={(e) => setExpiresAt(e.target.value)}
            className="rounded border border-slate-300 dark:border-slate-600 dark:bg-slate-900"
          />
        ) : rule.expiresAt ? (
          when(rule.expiresAt)
        ) : (
          'never'
        )}
      </td>
      <td className="space-x-1 p-1 whitespace-nowrap">
        {rule.status === 'ACTIVE' && !editing ? (
          <button type="button" className={button} onClick={() => setEditing(true)}>
            Edit
          </button>
        ) : null}
        {editing ? (
          <>
            <button
              type="button"
              className={button}
              onClick={() =>
                void update({
                  input: {
                    idempotencyKey: makeIdempotencyKey('updateRule'),
                    ruleId: rule.ruleId,
                    name,
                    expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null,
                    ...(rule.match === 'ARGUMENT_PREFIX' ? { argumentPrefix: prefix } : {}),
                  },
                }).then((r) => {
                  if (r.error) fail(r.error);
                  else {
                    setProblem(null);
                    setEditing(false);
                  }
                })
              }
            >
              Save
            </button>
            <button type="button" className={button} onClick={() => setEditing(false)}>
              Cancel
            </button>
          </>
        ) : null}
        {rule.status === 'ACTIVE' ? (
          <button
            type="button"
            className={button}
            disabled={revoking}
            aria-label={`Revoke rule ${rule.name}`}
            onClick={() =>
              void revoke({
                input: { idempotencyKey: makeIdempotencyKey('revokeRule'), ruleId: rule.ruleId },
              }).then((r) => (r.error ? fail(r.error) : undefined))
            }
          >
            Revoke
          </button>
        ) : null}
      </td>
    </tr>
  );
}
