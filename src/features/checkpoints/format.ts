/** `sha256:0123456789ab…`: enough to tell hashes apart at a glance; the full value is copyable. */
export function shortHash(hash: string, hexDigits = 12): string {
  const [algo, hex] = hash.includes(':') ? hash.split(':', 2) : ['', hash];
  if (!hex || hex.length <= hexDigits) return hash;
  return `${algo ? `${algo}:` : ''}${hex.slice(0, hexDigits)}…`;
}

/** A short id for headings: the first 8 characters of an id. */
export function shortId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** 1536 → "1.5 KiB". Accepts a decimal string for BigInt totals. */
export function formatBytes(value: number | string): string {
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isFinite(n)) return `${value} B`;
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let size = n / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(size < 10 ? 1 : 0)} ${units[unit]}`;
}

/** Local date and time of an ISO timestamp. */
export function dateTimeOf(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { hour12: false });
}

export const REASON_LABEL: Record<string, string> = {
  AGENT_WRITE: 'Before an agent write',
  RESTORE_PREIMAGE: 'Before a restore',
  MANUAL: 'Manual',
  STUDIO_AFTER_TOOL: 'After a tool call',
};
