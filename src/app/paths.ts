import { pathOf } from './routes.ts';

/** Path builders handed to features (features never import src/app). */
export const sessionHref = (sessionId: string) => pathOf({ name: 'session', sessionId });
export const checkpointsHref = (sessionId: string) => pathOf({ name: 'checkpoints', sessionId });
export const checkpointRestoreHref = (sessionId: string, checkpointId: string) =>
  pathOf({ name: 'checkpointRestore', sessionId, checkpointId });
export const eventHref = (sessionId: string, seq: string) =>
  pathOf({ name: 'event', sessionId, seq });
