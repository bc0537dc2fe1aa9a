// Keeps memory flat while large files stream through (docs/performance.md §Uploads).
//
// Every socket read of an upload is a fresh buffer (Node's HTTP parser copies each piece of the
// body into a new Buffer), and so is every read of a download's file stream. Nothing keeps them:
// once a chunk is written on, only the garbage collector still knows it. But their bytes live
// outside the JavaScript heap, and a stream allocates so little on the heap itself that no
// ordinary GC comes; V8 collects them only when its external-memory limit is reached, after tens
// of megabytes of dead chunks have piled up (bench/upload-memory.ts shows it).
//
// The chunks cannot be avoided: Node has no way to read an HTTP request body into a buffer the
// caller reuses (net's `onread` option is for sockets a program creates itself, and the HTTP
// server's parser reads its connections directly). What can be chosen is when they are
// collected. A minor GC (a scavenge: about a millisecond; the wrappers of the chunks are young)
// every 16 MB transferred frees them early, so an upload's resident memory stays flat
// (bench/files-upload.ts).
import { collectYoung } from '../lib/gc.ts';

const EVERY_BYTES = 16 * 1024 * 1024;

/** Returns a counter to call with each chunk's size; it runs a minor GC every 16 MB. */
export function reclaimer(): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < EVERY_BYTES) return;
    since = 0;
    collectYoung();
  };
}
