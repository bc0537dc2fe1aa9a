// Which blob store a configuration gets. The S3 store is loaded only when S3 is configured: the
// AWS SDK is a large tree of modules, and a process keeps in memory only what its configuration
// uses (docs/performance.md §Loading only what is configured).
import type { BlobStore } from './blob-store.ts';
import { createDiskBlobStore } from './disk.ts';
import type { S3BlobStoreConfig } from './s3.ts';

export type BlobStoreConfig = { kind: 'disk'; dir: string } | ({ kind: 's3' } & S3BlobStoreConfig);

export async function createBlobStore(config: BlobStoreConfig): Promise<BlobStore> {
  switch (config.kind) {
    case 'disk':
      return createDiskBlobStore(config.dir);
    case 's3': {
      const { kind: _kind, ...s3 } = config;
      const { createS3BlobStore } = await import('./s3.ts');
      return createS3BlobStore(s3);
    }
    default:
      throw new Error(`unknown blob store kind: ${String((config as { kind: unknown }).kind)}`);
  }
}

export * from './blob-store.ts';
export { contentDisposition, sanitizeFilename } from './content-disposition.ts';
export { createDiskBlobStore } from './disk.ts';
export type { S3BlobStoreConfig } from './s3.ts';
