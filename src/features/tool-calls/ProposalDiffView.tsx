import { SafeText } from '../../ui/SafeText.tsx';

export interface ProposalDiffFile {
  path: string;
  beforeHash: string | null;
  afterHash: string | null;
  added: number;
  removed: number;
  hunks: string;
  truncated: boolean;
  binary: boolean;
}

const LINE_CLASS: Record<'+' | '-' | '@' | ' ', string> = {
  '+': 'bg-emerald-50 text-emerald-950 dark:bg-emerald-950/60 dark:text-emerald-100',
  '-': 'bg-red-50 text-red-950 dark:bg-red-950/60 dark:text-red-100',
  '@': 'text-slate-500 dark:text-slate-400',
  ' ': '',
};

function kindOf(line: string): '+' | '-' | '@' | ' ' {
  const first = line[0];
  return first === '+' || first === '-' || first === '@' ? first : ' ';
}

/**
 * The server-computed line diff of a file-writing proposal: one block per file with its line
 * counts and hunks, every line rendered as safe text (hidden characters shown, never obeyed).
 * What the diff was made against is bound into the argument hash being approved.
 */
export function ProposalDiffView({
  files,
  truncated,
  open,
}: {
  files: readonly ProposalDiffFile[];
  truncated: boolean;
  open: boolean;
}) {
  if (files.length === 0) return null;
  return (
    <details open={open} className="rounded border border-slate-200 text-xs dark:border-slate-700">
      <summary className="cursor-pointer px-2 py-1 font-medium">
        Change against the files on disk ({files.length} {files.length === 1 ? 'file' : 'files'})
      </summary>
      <div className="space-y-2 p-2">
        {files.map((file) => (
          <section key={file.path} aria-label={`Diff of ${file.path}`}>
            <p className="flex flex-wrap gap-2 font-mono">
              <SafeText text={file.path} className="font-semibold" />
              {file.afterHash === null ? (
                <span className="text-red-800 dark:text-red-300">deleted</span>
              ) : file.beforeHash === null ? (
                <span className="text-emerald-800 dark:text-emerald-300">new file</span>
              ) : null}
              <span className="text-emerald-800 dark:text-emerald-300">+{file.added}</span>
              <span className="text-red-800 dark:text-red-300">−{file.removed}</span>
            </p>
            {file.binary ? (
              <p className="text-slate-600 dark:text-slate-400">
                Not shown as lines (binary or over 256 KiB); compared by content hash.
              </p>
            ) : (
              <pre className="max-h-80 overflow-auto rounded bg-slate-50 font-mono leading-5 dark:bg-slate-900">
                {file.hunks.split('\n').map((line, index) => (
                  <div key={index} className={`whitespace-pre px-1 ${LINE_CLASS[kindOf(line)]}`}>
                    <SafeText text={line || ' '} />
                  </div>
                ))}
              </pre>
            )}
            {file.truncated && !file.binary ? (
              <p className="text-amber-900 dark:text-amber-200">This diff was cut short.</p>
            ) : null}
          </section>
        ))}
        {truncated ? (
          <p className="text-amber-900 dark:text-amber-200">
            Some of the change is not shown (the diff is bounded); the hash still binds all of it.
          </p>
        ) : null}
      </div>
    </details>
  );
}

/** The shell command of a Bash-like call (its `command` or `cmd` argument), if it has one. */
export function commandOf(argumentsJson: string | null): string | null {
  if (!argumentsJson) return null;
  try {
    const args = JSON.parse(argumentsJson) as Record<string, unknown>;
    const command = args.command ?? args.cmd;
    return typeof command === 'string' ? command : null;
  } catch {
    return null;
  }
}
