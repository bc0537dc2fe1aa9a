import type { BlobStore } from './blob-store.ts';
import { createDiskBlobStore } from './disk.ts';
import { createS3BlobStore, type S3BlobStoreConfig } from './s3.ts';

export type BlobStoreConfig = { kind: 'disk'; dir: string } | ({ kind: 's3' } & S3BlobStoreConfig);

export function createBlobStore(config: BlobStoreConfig): BlobStore {
  switch (config.kind) {
    case 'disk':
      return createDiskBlobStore(config.dir);
    case 's3': {
      const { kind: _kind, ...s3 } = config;
      return createS3BlobStore(s3);
    }
    default:
      throw new Error(`unknown blob store kind: ${String((config as { kind: unknown }).kind)}`);
  }
}

export * from './blob-store.ts';
export { contentDisposition, sanitizeFilename } from './content-disposition.ts';
export { createDiskBlobStore } from './disk.ts';
export { createS3BlobStore, type S3BlobStoreConfig } from './s3.ts';
