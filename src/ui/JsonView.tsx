import { useId, useState } from 'react';
import { SafeText } from './SafeText.tsx';

/** A parsed JSON value that keeps number literals and duplicate keys exactly as written. */
export type JsonNode =
  | { kind: 'object'; entries: { key: string; value: JsonNode; duplicate: boolean }[] }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; raw: string }
  | { kind: 'literal'; raw: 'true' | 'false' | 'null' };

const MAX_DEPTH = 200;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * Parses strict JSON (RFC 8259) without losing what JSON.parse would: big numbers stay their
 * literal text and a repeated key is kept and flagged instead of silently overwritten, so what
 * the reviewer sees is what the tool receives. Returns null for anything that is not JSON.
 */
export function parseJsonExact(text: string): JsonNode | null {
  let i = 0;
  // Annotated so TypeScript narrows after a call.
  const fail: () => never = () => {
    throw new SyntaxError(`invalid JSON at ${i}`);
  };
  const ws = () => {
    while (
      i < text.length &&
      (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')
    )
      i += 1;
  };
  const string = (): string => {
    i += 1;
    let out = '';
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i += 1;
        return out;
      }
      if (c < 0x20) fail();
      if (c === 0x5c) {
        const e = text[i + 1] ?? '';
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail();
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const mapped = ESCAPES[e];
          if (mapped === undefined) fail();
          out += mapped;
          i += 2;
        }
      } else {
        out += text[i];
        i += 1;
      }
    }
  };
  const value = (depth: number): JsonNode => {
    if (depth > MAX_DEPTH) fail();
    ws();
    const c = text[i];
    if (c === '{') {
      i += 1;
      const entries: { key: string; value: JsonNode; duplicate: boolean }[] = [];
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i += 1;
        return { kind: 'object', entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const key = string();
        ws();
        if (text[i] !== ':') fail();
        i += 1;
        const v = value(depth + 1);
        entries.push({ key, value: v, duplicate: seen.has(key) });
        seen.add(key);
        ws();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === '}') {
          i += 1;
          return { kind: 'object', entries };
        }
        fail();
      }
    }
    if (c === '[') {
      i += 1;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') {
        i += 1;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i += 1;
          continue;
        }
        if (text[i] === ']') {
          i += 1;
          return { kind: 'array', items };
        }
        fail();
      }
    }
    if (c === '"') return { kind: 'string', value: string() };
    for (const raw of ['true', 'false', 'null'] as const) {
      if (text.startsWith(raw, i)) {
        i += raw.length;
        return { kind: 'literal', raw };
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail();
    i += m[0].length;
    return { kind: 'number', raw: m[0] };
  };
  try {
    const root = value(0);
    ws();
    return i === text.length ? root : null;
  } catch {
    return null;
  }
}

function Value({ node, depth, openDepth }: { node: JsonNode; depth: number; openDepth: number }) {
  switch (node.kind) {
    case 'string':
      return (
        <span className="whitespace-pre-wrap break-words text-emerald-800 dark:text-emerald-300">
          &quot;
          <SafeText text={node.value} />
          &quot;
        </span>
      );
    case 'number':
      return <span className="text-blue-800 dark:text-blue-300">{node.raw}</span>;
    case 'literal':
      return <span className="text-purple-800 dark:text-purple-300">{node.raw}</span>;
    case 'array':
    case 'object': {
      const isArray = node.kind === 'array';
      const size = isArray ? node.items.length : node.entries.length;
      if (size === 0) return <span>{isArray ? '[]' : '{}'}</span>;
      const summary = isArray
        ? `[ ${size} ${size === 1 ? 'item' : 'items'} ]`
        : `{ ${size} ${size === 1 ? 'key' : 'keys'} }`;
      return (
        <details open={depth < openDepth} className="inline-block align-top">
          <summary className="cursor-pointer select-none text-slate-500 dark:text-slate-400">
            {summary}
          </summary>
          <ul className="ml-4 border-l border-slate-200 pl-2 dark:border-slate-700">
            {isArray
              ? node.items.map((item, index) => (
                  <li key={index}>
                    <span className="text-slate-600 dark:text-slate-400">{index}: </span>
                    <Value node={item} depth={depth + 1} openDepth={openDepth} />
                  </li>
                ))
              : node.entries.map((entry, index) => (
                  <li key={index}>
                    <span className="text-slate-700 dark:text-slate-300">
                      <SafeText text={entry.key} />
                    </span>
                    {entry.duplicate ? (
                      <span className="ml-1 rounded bg-red-100 px-1 text-xs text-red-800 dark:bg-red-950 dark:text-red-200">
                        repeated key
                      </span>
                    ) : null}
                    <span className="text-slate-600 dark:text-slate-400">: </span>
                    <Value node={entry.value} depth={depth + 1} openDepth={openDepth} />
                  </li>
                ))}
          </ul>
        </details>
      );
    }
  }
}

/**
 * Collapsible, pretty view of a JSON string (arguments, results, payloads). Strings and keys go
 * through SafeText; number literals are shown as written. Invalid JSON is shown as raw text with
 * a note. "Show exact text" switches to the string exactly as received.
 */
export function JsonView({
  json,
  label,
  defaultOpen = true,
  openDepth = 3,
}: {
  json: string;
  label: string;
  defaultOpen?: boolean;
  openDepth?: number;
}) {
  const [raw, setRaw] = useState(false);
  const id = useId();
  const tree = parseJsonExact(json);
  const duplicates = tree ? hasDuplicate(tree) : false;
  return (
    <details open={defaultOpen} className="rounded border border-slate-200 dark:border-slate-700">
      <summary className="cursor-pointer px-2 py-1 text-sm font-medium">{label}</summary>
      <div className="border-t border-slate-200 px-2 py-1 dark:border-slate-700">
        {tree ? (
          <label
            className="mb-1 flex items-center gap-1 text-xs text-slate-600 dark:text-slate-400"
            htmlFor={id}
          >
            <input
              id={id}
              type="checkbox"
              checked={raw}
              onChange={(e) => setRaw(e.target.checked)}
            />
            Show exact text
          </label>
        ) : (
          <p className="mb-1 text-xs text-amber-800 dark:text-amber-300">
            Not valid JSON; shown exactly as received.
          </p>
        )}
        {duplicates ? (
          <p role="note" className="mb-1 text-xs text-red-800 dark:text-red-300">
            This JSON repeats a key; every occurrence is shown.
          </p>
        ) : null}
        <div className="max-h-96 overflow-auto font-mono text-xs">
          {tree && !raw ? (
            <Value node={tree} depth={0} openDepth={openDepth} />
          ) : (
            <pre className="whitespace-pre-wrap break-words">
              <SafeText text={json} />
            </pre>
          )}
        </div>
      </div>
    </details>
  );
}

function hasDuplicate(node: JsonNode): boolean {
  if (node.kind === 'object') return node.entries.some((e) => e.duplicate || hasDuplicate(e.value));
  if (node.kind === 'array') return node.items.some(hasDuplicate);
  return false;
}
