import { useState, type FormEvent } from 'react';
import { useClient, useQuery } from 'urql';
import type { CombinedError } from '@urql/core';
import { MAX_USER_MESSAGE_BYTES } from '../../../protocol/contract.ts';
import type { AgentMode } from '../../../protocol/events.ts';
import { attachmentStoreFor, errorCode, makeIdempotencyKey } from '../../graphql/attachment.ts';
import { APP_ID } from '../../graphql/cache.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import {
  CreateSessionMutation,
  FirstMessageMutation,
  StartableProjectsQuery,
  type StartableProject,
} from './documents.ts';

const MODES: Record<AgentMode, string> = {
  BUILD: 'Build (checkpointed edits)',
  ASK: 'Ask (read-only)',
  PLAY: 'Play',
};

const field =
  'mt-1 block w-full rounded border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50';
const button =
  'rounded-md bg-blue-700 px-3 py-1 text-sm font-medium text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-blue-600 disabled:opacity-50';

function refusal(prefix: string, error: CombinedError): string {
  const code = errorCode(error);
  return `${prefix}${code ? ` (${code})` : ''}: ${error.graphQLErrors[0]?.message ?? error.message}`;
}

/**
 * "New session": a project that a source can start sessions in (from `studioProjects`), a
 * mode, a model and the first message. Creates the session through
 * `crowdyStudioAgentCreateSession` (the cache updater links it into the sessions list), attaches
 * this tab, sends the first message, then hands the new session's id to `onCreated`. Shown only
 * when some project can start a session.
 */
export function NewSessionForm({ onCreated }: { onCreated: (sessionId: string) => void }) {
  const client = useClient();
  const [{ data }] = useQuery({ query: StartableProjectsQuery });
  const projects = (data?.studioProjects ?? []).filter(
    (p): p is StartableProject & { studioStartSource: string } => p.studioStartSource !== null,
  );
  const [projectId, setProjectId] = useState('');
  const [mode, setMode] = useState<AgentMode>('BUILD');
  const [model, setModel] = useState('');
  const [text, setText] = useState('');
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (projects.length === 0) return null;

  const chosen = projects.find((p) => p.projectId === projectId) ?? projects[0];
  const tooLong = new TextEncoder().encode(text).length > MAX_USER_MESSAGE_BYTES;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const content = text.trim();
    if (!chosen || !content || tooLong || running) return;
    setRunning(true);
    setError(null);
    try {
      const created = await client
        .mutation(CreateSessionMutation, {
          input: {
            idempotencyKey: makeIdempotencyKey('create-session'),
            appId: APP_ID,
            projectId: chosen.projectId,
            mode,
            requestedModel: model.trim() || null,
          },
        })
        .toPromise();
      const sessionId = created.data?.crowdyStudioAgentCreateSession.sessionId;
      if (created.error || !sessionId) {
        setError(
          created.error
            ? refusal('Could not start the session', created.error)
            : 'No session came back',
        );
        return;
      }
      const clientEpoch = await attachmentStoreFor(client).ensureAttached(sessionId);
      const sent = await client
        .mutation(FirstMessageMutation, {
          input: {
            idempotencyKey: makeIdempotencyKey('send-message'),
            sessionId,
            clientEpoch,
            content,
          },
        })
        .toPromise();
      if (sent.error)
        setError(refusal('The session was created but its first message was refused', sent.error));
      else setText('');
      onCreated(sessionId);
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setRunning(false);
    }
  };

  return (
    <details className="border-b border-slate-200 px-3 py-2 text-sm dark:border-slate-700">
      <summary className="cursor-pointer font-medium">New session</summary>
      <form
        aria-label="New session"
        onSubmit={(event) => void submit(event)}
        className="mt-2 space-y-2"
      >
        <label className="block text-xs text-slate-700 dark:text-slate-300">
          Project
          <select
            className={field}
            value={chosen?.projectId ?? ''}
            onChange={(event) => setProjectId(event.target.value)}
          >
            {projects.map((p) => (
              <option key={p.projectId} value={p.projectId}>
                {p.name} ({p.studioStartSource})
              </option>
            ))}
          </select>
        </label>
        <label className="block text-xs text-slate-700 dark:text-slate-300">
          Mode
          <select
            className={field}
            value={mode}
            onChange={(event) => setMode(event.target.value as AgentMode)}
          >
            {(Object.keys(MODES) as AgentMode[]).map((m) => (
              <option key={m} value={m}>
                {MODES[m]}
              </option>
            ))}
          </select>
        </label>
        <label className="block text-xs text-slate-700 dark:text-slate-300">
          Model (empty: the source's default)
          <input
            className={field}
            value={model}
            onChange={(event) => setModel(event.target.value)}
          />
        </label>
        <label className="block text-xs text-slate-700 dark:text-slate-300">
          First message
          <textarea
            className={field}
            rows={3}
            value={text}
            onChange={(event) => setText(event.target.value)}
          />
        </label>
        {tooLong ? (
          <p className="text-xs text-red-800 dark:text-red-300">The message is over 16 KiB.</p>
        ) : null}
        <button type="submit" className={button} disabled={running || !text.trim() || tooLong}>
          {running ? 'Starting…' : 'Start session'}
        </button>
        {error ? (
          <p role="alert" className="text-xs text-red-800 dark:text-red-300">
            <SafeText text={error} />
          </p>
        ) : null}
      </form>
    </details>
  );
}
