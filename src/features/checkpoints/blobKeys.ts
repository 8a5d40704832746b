/** TanStack Query keys for stored file versions (GET /api/blobs), by content hash. */
export const blobKeys = {
  all: ['studio-blobs'] as const,
  content: (contentHash: string) => [...blobKeys.all, 'content', contentHash] as const,
};
