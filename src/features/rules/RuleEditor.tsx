import { useId, useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import { errorCode, makeIdempotencyKey } from '../../graphql/attachment.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { CreateApprovalRuleMutation, RuleSessionQuery } from './documents.ts';
import {
  EFFECT_LABEL,
  GUARDED_RISKS,
  MATCH_LABEL,
  SCOPE_LABEL,
  suggestPrefix,
  type RuleEffect,
  type RuleMatch,
  type RuleScope,
} from './labels.ts';

/** The call a rule is made from (structurally the tool-call card's RuleSeed). */
export interface RuleSeedInput {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  argumentsJson: string | null;
  risk: string | null;
  /** Rules the source suggests for this call (AgentApproval.studioRuleSuggestions). */
  suggestions?: readonly RuleSuggestionInput[];
}

/** A rule the source suggests (structurally the card's RuleSuggestion). */
export interface RuleSuggestionInput {
  effect: RuleEffect;
  toolName: string;
  match: RuleMatch;
  argumentName: string | null;
  argumentPrefix: string | null;
  scope: RuleScope;
  label: string;
}

/** The source's suggestion the editor starts from: the first of this effect for this tool. */
export function suggestionFor(seed: RuleSeedInput, effect: RuleEffect): RuleSuggestionInput | null {
  return (
    seed.suggestions?.find(
      (s) =>
        s.effect === effect &&
        s.toolName === seed.toolName &&
        (s.match !== 'ARGUMENT_PREFIX' || (s.argumentName && s.argumentPrefix)),
    ) ?? null
  );
}

const EXPIRY: Record<'never' | 'hour' | 'day' | 'week', { label: string; ms: number | null }> = {
  never: { label: 'never', ms: null },
  hour: { label: 'in 1 hour', ms: 3_600_000 },
  day: { label: 'in 1 day', ms: 86_400_000 },
  week: { label: 'in 7 days', ms: 7 * 86_400_000 },
};

const button =
  'rounded px-3 py-1 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:opacity-50';

/**
 * The rule editor, prefilled from one call: match (these exact arguments / an argument prefix /
 * any call) × scope (session / project / source / studio) × optional expiry. An ALLOW rule for a
 * DESTRUCTIVE-class tool needs the warning accepted; the server enforces the same. When the source
 * suggested a rule of this effect for this tool (Claude Code's permission suggestions), the
 * editor starts from it and says so.
 */
export function RuleEditor({
  seed,
  effect,
  onDone,
}: {
  seed: RuleSeedInput;
  effect: RuleEffect;
  onDone: (message: string | null) => void;
}) {
  const id = useId();
  const [{ data }] = useQuery({
    query: RuleSessionQuery,
    variables: { sessionId: seed.sessionId },
  });
  const session = data?.crowdyStudioAgentSession;
  const suggested = suggestionFor(seed, effect);
  const suggestion =
    suggested?.match === 'ARGUMENT_PREFIX' && suggested.argumentName
      ? { name: suggested.argumentName, prefix: suggested.argumentPrefix ?? '' }
      : suggestPrefix(seed.argumentsJson);
  const [match, setMatch] = useState<RuleMatch>(
    suggested?.match ?? (suggestion ? 'ARGUMENT_PREFIX' : 'EXACT_ARGUMENTS'),
  );
  const [prefix, setPrefix] = useState(suggestion?.prefix ?? '');
  const [scope, setScope] = useState<RuleScope>(suggested?.scope ?? 'SESSION');
  const [expiry, setExpiry] = useState<keyof typeof EXPIRY>('never');
  const [name, setName] = useState('');
  const [accepted, setAccepted] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [{ fetching }, create] = useMutation(CreateApprovalRuleMutation);
  const guarded = effect === 'ALLOW' && seed.risk !== null && GUARDED_RISKS.has(seed.risk);

  const scopes: RuleScope[] = [
    'SESSION',
    ...(session?.projectId || scope === 'PROJECT' ? ['PROJECT' as const] : []),
    'SOURCE',
    'STUDIO',
  ];

  const save = async () => {
    setError(null);
    const ms = EXPIRY[expiry].ms;
    const result = await create({
      input: {
        idempotencyKey: makeIdempotencyKey('createRule'),
        appId: LOCAL_APP_ID,
        effect,
        toolName: seed.toolName,
        match,
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(match === 'EXACT_ARGUMENTS' ? { argumentsJson: seed.argumentsJson ?? '{}' } : {}),
        ...(match === 'ARGUMENT_PREFIX' && suggestion
          ? { argumentName: suggestion.name, argumentPrefix: prefix }
          : {}),
        scope,
        ...(scope === 'SESSION' ? { sessionId: seed.sessionId } : {}),
        ...(scope === 'PROJECT' && session?.projectId ? { projectId: session.projectId } : {}),
        ...(scope === 'SOURCE' && session ? { sourceId: session.studioSource } : {}),
        ...(ms !== null ? { expiresAt: new Date(Date.now() + ms).toISOString() } : {}),
        ...(guarded ? { allowDestructive: accepted } : {}),
      },
    });
    if (result.error) {
      setError(
        `${errorCode(result.error) ?? 'Refused'}: ${result.error.graphQLErrors[0]?.message ?? result.error.message}`,
      );
      return;
    }
    const rule = result.data?.studioCreateApprovalRule;
    onDone(rule ? `Rule saved: ${rule.name}. It applies to the next matching call.` : null);
  };

  return (
    <form
      aria-label={`${EFFECT_LABEL[effect]} rule`}
      className="space-y-2 rounded border border-blue-300 bg-blue-50 p-2 text-sm dark:border-blue-700 dark:bg-blue-950/40"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <p className="font-semibold">
        {EFFECT_LABEL[effect]} <SafeText text={seed.toolName} className="font-mono" />
      </p>
      {suggested ? (
        <p className="text-slate-700 dark:text-slate-300">
          Starts from {session?.studioSource === 'claude-code' ? 'Claude Code' : 'the agent'}
          &apos;s suggestion: <SafeText text={suggested.label} className="font-mono" />
        </p>
      ) : null}
      <fieldset className="space-y-1">
        <legend className="font-medium">Match</legend>
        {(['EXACT_ARGUMENTS', 'ARGUMENT_PREFIX', 'ANY'] as const).map((m) =>
          m === 'ARGUMENT_PREFIX' && !suggestion ? null : (
            <label key={m} className="flex items-center gap-2">
              <input
                type="radio"
                name={`${id}-match`}
                checked={match === m}
                onChange={() => setMatch(m)}
              />
              {MATCH_LABEL[m]}
              {m === 'ARGUMENT_PREFIX' && suggestion ? (
                <>
                  {' '}
                  (<code className="font-mono">{suggestion.name}</code> starts with)
                  <input
                    aria-label="Prefix"
                    value={prefix}
                    onChange={(event) => setPrefix(event.target.value)}
                    onFocus={() => setMatch('ARGUMENT_PREFIX')}
                    className="ml-1 w-48 rounded border border-slate-300 bg-white px-1 font-mono dark:border-slate-600 dark:bg-slate-900"
                  />
                </>
              ) : null}
            </label>
          ),
        )}
      </fieldset>
      <fieldset className="flex flex-wrap gap-3">
        <legend className="font-medium">Scope</legend>
        {scopes.map((s) => (
          <label key={s} className="flex items-center gap-1">
            <input
              type="radio"
              name={`${id}-scope`}
              checked={scope === s}
              onChange={() => setScope(s)}
            />
            {SCOPE_LABEL[s]}
          </label>
        ))}
      </fieldset>
      <label className="flex items-center gap-2">
        Expires
        <select
          value={expiry}
          onChange={(event) => setExpiry(event.target.value as keyof typeof EXPIRY)}
          className="rounded border border-slate-300 bg-white dark:border-slate-600 dark:bg-slate-900"
        >
          {(Object.keys(EXPIRY) as (keyof typeof EXPIRY)[]).map((k) => (
            <option key={k} value={k}>
              {EXPIRY[k].label}
            </option>
          ))}
        </select>
      </label>
      <label className="flex items-center gap-2">
        Name (optional)
        <input
          value={name}
          maxLength={120}
          onChange={(event) => setName(event.target.value)}
          className="w-64 rounded border border-slate-300 bg-white px-1 dark:border-slate-600 dark:bg-slate-900"
        />
      </label>
      {guarded ? (
        <div
          role="alert"
          className="rounded bg-red-100 p-2 text-red-950 dark:bg-red-950 dark:text-red-100"
        >
          <p>
            <strong>{seed.risk}</strong>: this tool can destroy work. A rule allows it only if you
            say so; every matching call will then run without anyone looking.
          </p>
          <label className="mt-1 flex items-center gap-2">
            <input
              type="checkbox"
              checked={accepted}
              onChange={(e) => setAccepted(e.target.checked)}
            />
            Let this rule allow {seed.risk} calls
          </label>
        </div>
      ) : null}
      {error ? (
        <p role="alert" className="text-red-800 dark:text-red-300">
          <SafeText text={error} />
        </p>
      ) : null}
      <div className="flex gap-2">
        <button
          type="submit"
          disabled={
            fetching ||
            (guarded && !accepted) ||
            (match === 'ARGUMENT_PREFIX' && !prefix) ||
            (scope === 'PROJECT' && !session?.projectId)
          }
          className={`${button} ${effect === 'ALLOW' ? 'bg-emerald-700 hover:bg-emerald-800' : 'bg-red-700 hover:bg-red-800'} text-white`}
        >
          Save rule
        </button>
        <button
          type="button"
          onClick={() => onDone(null)}
          className={`${button} border border-slate-300 dark:border-slate-600`}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}

/** "Always allow…" / "Always deny…" under a card; each opens the editor prefilled from the call. */
export function RuleActions({ seed }: { seed: RuleSeedInput }) {
  const [open, setOpen] = useState<RuleEffect | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const small =
    'rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:hover:bg-slate-800';
  return (
    <div className="space-y-1">
      {open ? (
        <RuleEditor
          seed={seed}
          effect={open}
          onDone={(message) => {
            setOpen(null);
            setSaved(message);
          }}
        />
      ) : (
        <div className="flex flex-wrap items-center gap-2">
          <button type="button" className={small} onClick={() => setOpen('ALLOW')}>
            Always allow…
          </button>
          <button type="button" className={small} onClick={() => setOpen('DENY')}>
            Always deny…
          </button>
          {saved ? (
            <span role="status" className="text-xs text-emerald-800 dark:text-emerald-300">
              <SafeText text={saved} />
            </span>
          ) : null}
        </div>
      )}
    </div>
  );
}
