import { useEffect, useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

/**
 * Copies `text` to the clipboard. `label` names what is copied ("content hash") for the
 * accessible name; the result is announced through a polite status region.
 */
export function CopyButton({
  text,
  label,
  className = '',
}: {
  text: string;
  label: string;
  className?: string;
}) {
  const [state, setState] = useState<CopyState>('idle');
  useEffect(() => {
    if (state === 'idle') return undefined;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);

  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };

  return (
    <span className={`inline-flex items-center gap-1 ${className}`}>
      <button
        type="button"
        onClick={() => void copy()}
        aria-label={`Copy ${label}`}
        title={`Copy ${label}`}
        className="rounded border border-slate-300 px-1.5 py-0.5 text-xs text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 dark:border-slate-600 dark:text-slate-200 dark:hover:bg-slate-800"
      >
        {state === 'copied' ? 'Copied' : 'Copy'}
      </button>
      <span role="status" className="sr-only">
        {state === 'copied'
          ? `Copied ${label}`
          : state === 'failed'
            ? `Could not copy ${label}`
            : ''}
      </span>
    </span>
  );
}
