import { describe, expect, it } from 'vitest';
import { makeStudioHttp, retryUnlessRefused, StudioHttpError } from './studioHttp.ts';

describe('retryUnlessRefused', () => {
  it('retries network failures and 5xx twice, never a refusal', () => {
    const network = new TypeError('Failed to fetch');
    expect([0, 1, 2].map((n) => retryUnlessRefused(n, network))).toEqual([true, true, false]);
    expect(retryUnlessRefused(0, new StudioHttpError('http', 503, 'busy'))).toBe(true);
    expect(retryUnlessRefused(0, new StudioHttpError('http', 429, 'slow down'))).toBe(false);
    expect(retryUnlessRefused(0, new StudioHttpError('unauthorized', 401, 'no'))).toBe(false);
    expect(retryUnlessRefused(0, new StudioHttpError('notFound', 404, 'gone'))).toBe(false);
  });
});

describe('makeStudioHttp', () => {
  it('asks the endpoint’s origin, not its path, and sends nothing for a malformed hash', async () => {
    const urls: string[] = [];
    const http = makeStudioHttp({
      endpoint: 'https://api.example.com/studio/graphql',
      token: 't',
      fetchImpl: async (input) => {
        urls.push(String(input));
        return new Response('oops', { status: 500, statusText: 'Internal Server Error' });
      },
    });
    await expect(http.getBlob('sha256:../../etc')).rejects.toMatchObject({ kind: 'badHash' });
    expect(urls).toEqual([]);
    await expect(http.getHealth()).rejects.toThrow(
      'The server answered 500 Internal Server Error for health report.',
    );
    expect(urls).toEqual(['https://api.example.com/healthz']);
  });
});
