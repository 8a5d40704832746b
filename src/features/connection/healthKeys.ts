/** TanStack Query keys for the server's health report (GET /healthz). */
export const healthKeys = {
  all: ['studio-health'] as const,
  server: () => [...healthKeys.all, 'server'] as const,
};
