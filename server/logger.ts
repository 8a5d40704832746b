/**
 * The server's one logger. Every line passes through `redact`, which masks bearer tokens,
 * API keys and anything registered as a secret, so no token reaches stdout or a log file.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Registers a value that must never be printed (tokens, API keys). */
  addSecret(secret: string): void;
}

const PATTERNS: RegExp[] = [
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /sk-ant-[A-Za-z0-9_-]+/g,
  /(["']?(?:x-api-key|authorization|api[_-]?key|token)["']?\s*[:=]\s*["']?)[^"',\s}]+/gi,
];

export function makeLogger(
  write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  options: { quiet?: boolean } = {},
): Logger {
  const secrets = new Set<string>();
  const redact = (text: string): string => {
    let out = text;
    for (const secret of secrets)
      if (secret.length >= 4) out = out.split(secret).join('[redacted]');
    for (const pattern of PATTERNS)
      out = out.replace(pattern, (match, prefix?: string) =>
        typeof prefix === 'string' ? `${prefix}[redacted]` : '[redacted]',
      );
    return out;
  };
  const emit = (level: string, message: string, fields?: Record<string, unknown>) => {
    if (options.quiet && level === 'info') return;
    const extra = fields
      ? ' ' + JSON.stringify(fields, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
      : '';
    write(redact(`[studio] ${level} ${message}${extra}`));
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    addSecret: (s) => {
      secrets.add(s);
    },
  };
}
