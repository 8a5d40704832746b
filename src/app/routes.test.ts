import { describe, expect, it } from 'vitest';
import { parseRoute, pathOf, type Route } from './routes.ts';

describe('routes', () => {
  it('parses every linkable screen and builds the same path back', () => {
    const cases: [string, Route][] = [
      ['/', { name: 'home' }],
      ['/inbox', { name: 'inbox' }],
      ['/sessions/ses_1', { name: 'session', sessionId: 'ses_1' }],
      ['/sessions/ses_1/checkpoints', { name: 'checkpoints', sessionId: 'ses_1' }],
      [
        '/sessions/ses_1/events/9007199254740993',
        { name: 'event', sessionId: 'ses_1', seq: '9007199254740993' },
      ],
      ['/sessions/a%2Fb', { name: 'session', sessionId: 'a/b' }],
    ];
    for (const [path, route] of cases) {
      expect(parseRoute(path)).toEqual(route);
      expect(pathOf(route)).toBe(path);
    }
  });

  it('treats anything else as not found', () => {
    expect(parseRoute('/sessions/s/events/01').name).toBe('notFound');
    expect(parseRoute('/sessions/s/events/-1').name).toBe('notFound');
    expect(parseRoute('/nope').name).toBe('notFound');
  });
});
