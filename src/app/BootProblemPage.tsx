import { useId, useState, type FormEvent } from 'react';
import type { BootProblem } from './bootstrap.ts';
import { tokenFromPaste } from './tokenHandoff.ts';

const HOW_TO = (
  <ol className="list-decimal space-y-1 pl-5">
    <li>
      In the project folder, run{' '}
      <code className="rounded bg-slate-100 px-1 font-mono dark:bg-slate-800">npm start</code>.
    </li>
    <li>
      It prints a line like{' '}
      <code className="rounded bg-slate-100 px-1 font-mono break-all dark:bg-slate-800">
        Agent Studio listening on http://127.0.0.1:4000/#token=…
      </code>
    </li>
    <li>
      Open that exact address in this browser. The token moves out of the address bar and is kept
      for this tab only.
    </li>
  </ol>
);

/**
 * Where a tab without a token gets one: paste the printed address or the token itself. It goes
 * into this tab's sessionStorage, never into the address bar.
 */
function PasteToken({ onToken }: { onToken: (token: string) => void }) {
  const id = useId();
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const token = tokenFromPaste(text);
    if (!token) {
      setProblem(
        'That is neither the printed address (…/#token=…) nor a token. Copy the whole line the server printed.',
      );
      return;
    }
    setProblem(null);
    setText('');
    onToken(token);
  };
  return (
    <form onSubmit={submit} className="space-y-2" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="font-semibold">
        Or paste it here
      </h3>
      <label htmlFor={id} className="block text-sm">
        The printed address or the access token
      </label>
      <div className="flex flex-wrap gap-2">
        <input
          id={id}
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-describedby={problem ? `${id}-problem` : undefined}
          aria-invalid={problem ? true : undefined}
          className="min-w-0 flex-1 rounded border border-slate-400 bg-white px-2 py-1 font-mono text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-500 dark:bg-slate-900 dark:text-slate-50"
        />
        <button
          type="submit"
          className="rounded bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
        >
          Open the studio
        </button>
      </div>
      {problem ? (
        <p id={`${id}-problem`} role="alert" className="text-sm text-red-800 dark:text-red-300">
          {problem}
        </p>
      ) : null}
      <p className="text-xs text-slate-600 dark:text-slate-300">
        A studio tab that is already open hands its token to new tabs of the same address by itself;
        this field is for when none is open.
      </p>
    </form>
  );
}

/** A clear page (never a blank one) for each reason the studio cannot start. */
export function BootProblemPage({
  problem,
  onRetry,
  onToken,
}: {
  problem: BootProblem;
  onRetry: () => void;
  /** A token the person pasted (the boot restarts with it). */
  onToken: (token: string) => void;
}) {
  return (
    <main className="mx-auto max-w-2xl space-y-4 p-8 text-slate-900 dark:text-slate-100">
      <h1 className="text-2xl font-semibold">Agent Studio</h1>
      {problem.kind === 'missingToken' ? (
        <section aria-labelledby="boot-title" className="space-y-3">
          <h2 id="boot-title" className="text-lg font-semibold">
            This tab has no access token
          </h2>
          <p>
            The studio only talks to its server with the token the server printed when it started.
          </p>
          {HOW_TO}
          <PasteToken onToken={onToken} />
        </section>
      ) : null}
      {problem.kind === 'rejectedToken' ? (
        <section aria-labelledby="boot-title" className="space-y-3">
          <h2 id="boot-title" className="text-lg font-semibold">
            The server did not accept this tab&apos;s token
          </h2>
          <p>
            The token is wrong or belongs to an earlier run of the server (a restart without a fixed
            token makes a new one). It was forgotten; get the current address:
          </p>
          {HOW_TO}
          <PasteToken onToken={onToken} />
        </section>
      ) : null}
      {problem.kind === 'unreachable' ? (
        <section aria-labelledby="boot-title" className="space-y-3">
          <h2 id="boot-title" className="text-lg font-semibold">
            The studio server is not answering
          </h2>
          <p>
            Tried <code className="font-mono break-all">{problem.endpoint}</code>: {problem.detail}
          </p>
          <p>
            Check that the server started with <code className="font-mono">npm start</code> is still
            running, then try again.
          </p>
          <button
            type="button"
            onClick={onRetry}
            className="rounded bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
          >
            Try again
          </button>
        </section>
      ) : null}
      {problem.kind === 'badConfig' ? (
        <section aria-labelledby="boot-title" className="space-y-3">
          <h2 id="boot-title" className="text-lg font-semibold">
            studio-config.json is not usable
          </h2>
          <p>{problem.detail}</p>
          <p>
            It must be JSON like <code className="font-mono">{'{"graphqlEndpoint": null}'}</code>{' '}
            (null means this page&apos;s own server) or an http(s) URL of a server that speaks the
            contract.
          </p>
        </section>
      ) : null}
    </main>
  );
}
