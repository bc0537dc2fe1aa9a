// An import file's bytes, checked to be UTF-8 text as they are read (docs/import.md §Format): a
// byte that is not UTF-8 (a file saved as Latin-1, Windows-1252 or UTF-16) ends the read with an
// ImportError naming its line, instead of being decoded as U+FFFD and written as such.
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { ImportError } from './kind.ts';

/** The offset of the first byte of `b` that does not start a whole UTF-8 character (`b.length` when none). */
export function firstInvalid(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const c = b[i] as number;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || (n > 1 && !isUtf8(b.subarray(i, i + n)))) return i;
    i += n;
  }
  return b.length;
}

/** Where the last character of `b` starts when its bytes run past the end of `b`, else `b.length`. */
function wholeEnd(b: Buffer): number {
  for (let i = b.length - 1; i >= Math.max(0, b.length - 4); i--) {
    const c = b[i] as number;
    if ((c & 0xc0) === 0x80) continue;
    const n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return i + n > b.length ? i : b.length;
  }
  return b.length;
}

/**
 * The line (from 1) and the byte in it (from 1) of the file's byte at `offset`. Lines are numbered as
 * an editor and the readers (linesOf, csv-parse) number them: `\r\n`, `\n` and `\r` end one each.
 */
async function placeOf(path: string, offset: number): Promise<{ line: number; column: number }> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    let line = 1;
    let lineStart = 0;
    let previous = 0;
    for (let pos = 0; pos < offset;) {
      const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, offset - pos), pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const c = buf[i] as number;
        if (c === 13 || (c === 10 && previous !== 13)) line++;
        if (c === 13 || c === 10) lineStart = pos + i + 1;
        previous = c;
      }
      pos += bytesRead;
    }
    return { line, column: offset - lineStart + 1 };
  } finally {
    await handle.close();
  }
}

/**
 * The error for the byte at `offset` that is not UTF-8, at the line it is on and placed at `field`
 * (`(line)`, `(row)`), or for a JSON array, whose objects are numbered by item, at line 0 and
 * `(file)` with the line in the message.
 */
export async function notUtf8(path: string, offset: number, byte: number, field: string): Promise<ImportError> {
  const { line, column } = await placeOf(path, offset);
  const hex = `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  const where = field === '(file)' ? `byte ${hex} on line ${line}, byte ${column} of it` : `byte ${hex}, byte ${column} of the line`;
  // A UTF-16 byte order mark: the file is UTF-16, as some spreadsheets save "Unicode text".
  const utf16 = offset === 0 && (byte === 0xff || byte === 0xfe);
  const what = utf16 ? 'is UTF-16 text, not UTF-8' : `is not UTF-8 text (${where})`;
  const convert = utf16 ? 'iconv -f UTF-16 -t UTF-8' : 'iconv -f WINDOWS-1252 -t UTF-8';
  return new ImportError(field === '(file)' ? 0 : line, field, `${what}: save the file as UTF-8, e.g. with ${convert}`);
}

/**
 * The bytes of the file at `path`, each chunk passed on once it is whole UTF-8 text (a character
 * cut by the chunk's end waits for the next chunk). The first byte that is not UTF-8 destroys the
 * stream with the ImportError of `notUtf8`, placed at `field`.
 */
export function utf8File(path: string, field: string): Readable {
  let carry: Buffer | undefined;
  let offset = 0;
  const fail = (done: (err: Error) => void, at: number, byte: number) => {
    notUtf8(path, at, byte, field).then(done, done);
  };
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
      const end = wholeEnd(buf);
      const whole = buf.subarray(0, end);
      if (!isUtf8(whole)) {
        // The whole lines before the bad byte are passed on, so that they are read first.
        const bad = firstInvalid(whole);
        const lines = Math.max(whole.lastIndexOf(10, bad), whole.lastIndexOf(13, bad));
        if (lines >= 0) this.push(whole.subarray(0, lines + 1));
        fail(done, offset + bad, whole[bad] as number);
        return;
      }
      carry = end < buf.length ? Buffer.from(buf.subarray(end)) : undefined;
      offset += end;
      done(null, whole);
    },
    flush(done) {
      // A character cut by the end of the file.
      if (carry) fail(done, offset, carry[0] as number);
      else done();
    },
  });
  createReadStream(path)
    .on('error', (err) => checked.destroy(err))
    .pipe(checked);
  return checked;
}
