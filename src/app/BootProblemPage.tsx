import type { BootProblem } from './bootstrap.ts';

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

/** A clear page (never a blank one) for each reason the studio cannot start. */
export function BootProblemPage({
  problem,
  onRetry,
}: {
  problem: BootProblem;
  onRetry: () => void;
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
