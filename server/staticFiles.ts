/**
 * The built web app (dist/), served by sirv: the file list is read once at start (no disk read
 * to find a file, no readFileSync per request; files stream), ETag + 304, the `.br` / `.gz`
 * siblings that `vite build` writes (scripts/precompress.ts) for clients that accept them, and
 * the app shell for client-side routes. Source maps are served only with `--serve-source-maps`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import sirv from 'sirv';
import type { Logger } from './logger.ts';

export type StaticHandler = (req: IncomingMessage, res: ServerResponse) => void;

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export function makeStaticHandler(
  staticDir: string | null,
  options: { serveSourceMaps: boolean; logger: Logger },
): StaticHandler {
  const plain = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
      ...SECURITY_HEADERS,
    });
    res.end(text);
  };
  if (!staticDir || !existsSync(join(staticDir, 'index.html')))
    return (_req, res) =>
      plain(
        res,
        503,
        'The web app is not built. Run `npm run build` and restart (npm start does both).',
      );
  const serve = sirv(staticDir, {
    etag: true,
    gzip: true,
    brotli: true,
    single: true,
    dev: false,
    setHeaders: (res, pathname) => {
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
      // Hashed names never change; everything else (the shell) is revalidated by ETag.
      res.setHeader(
        'Cache-Control',
        pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
    onNoMatch: (_req, res) => plain(res, 404, 'not found'),
  });
  return (req, res) => {
    if (!options.serveSourceMaps && /\.map(?:$|[?#])/i.test(req.url ?? '')) {
      plain(res, 404, 'not found');
      return;
    }
    // sirv streams the file it listed at start; if a rebuild removed it since, the stream fails:
    // end this response instead of letting the error reach the process.
    res.once('pipe', (source) => {
      source.once('error', (error: Error) => {
        options.logger.warn('static file vanished; restart the server after a rebuild', {
          url: (req.url ?? '').slice(0, 200),
          error: error.message,
        });
        if (!res.headersSent) plain(res, 404, 'not found');
        else res.destroy();
      });
    });
    serve(req, res);
  };
}
