// A file that is not text at all (docs/import.md §Format): a workbook, an archive, a PDF, or other
// binary data given where a CSV or NDJSON file is expected. Its first bytes say so, and the import
// refuses it in one line saying what it is and what to do, instead of reporting its first byte
// that is not UTF-8 with a hint to convert it from another character set, which would garble it,
// or its first line as a header naming no field.
import { open } from 'node:fs/promises';
import { ImportError } from './kind.ts';

/** The bytes of the file's start that are looked at. */
const HEAD_BYTES = 64 * 1024;

const SAVE_AS = 'export the sheet as "CSV UTF-8" from the spreadsheet, or the records as NDJSON';

/** Formats known by their first bytes, and what to do with each. */
const SIGNATURES: Array<{ magic: Buffer; what: string; fix: string }> = [
  { magic: Buffer.from('PK\x03\x04', 'latin1'), what: 'a ZIP archive (as an .xlsx, .ods or .numbers workbook is)', fix: SAVE_AS },
  { magic: Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), what: 'an Excel 97-2003 workbook (.xls) or another OLE document', fix: SAVE_AS },
  { magic: Buffer.from([0x1f, 0x8b]), what: 'gzip-compressed', fix: 'decompress it first, e.g. rolodex import … <(zcat FILE)' },
  { magic: Buffer.from('%PDF-', 'latin1'), what: 'a PDF document', fix: SAVE_AS },
];

async function start(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The error of a file at `path` that is not text, at line 1 and `(file)`; undefined for text (which
 * the readers then check line by line). Besides the signatures above, a NUL byte on the first line
 * marks binary data (or UTF-16 text without its byte order mark, which the UTF-8 check names when
 * it has one): no header or NDJSON line holds one.
 */
export async function binaryError(path: string): Promise<ImportError | undefined> {
  const head = await start(path).catch(() => undefined);
  // A file that cannot be read is left to the reader, which reports why in its own words.
  if (!head) return undefined;
  const known = SIGNATURES.find((s) => head.subarray(0, s.magic.length).equals(s.magic));
  if (known) return new ImportError(1, '(file)', `is ${known.what}, not text: ${known.fix}`);
  // A UTF-16 byte order mark: the UTF-8 check reports the file as UTF-16 text.
  if (head[0] === 0xff || head[0] === 0xfe) return undefined;
  const lineEnd = head.findIndex((b) => b === 10 || b === 13);
  if (head.subarray(0, lineEnd < 0 ? head.length : lineEnd).includes(0))
    return new ImportError(1, '(file)', `holds NUL bytes, as binary data or UTF-16 text does, not UTF-8 text: ${SAVE_AS}`);
  return undefined;
}
