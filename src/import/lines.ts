// The lines of an NDJSON text read as a stream (docs/import.md §Format): the import's file and
// its spill files. A line ends at `\r\n`, `\n` or `\r` and nowhere else, as an editor and csv-parse
// number lines. Node's readline also ends one at U+2028 and U+2029, which a JSON string holds as
// they are (JSON.stringify, and so `rolodex export`, writes them raw): a valid line would be read
// as two pieces of JSON, and every line after it numbered one too many.

const END = /\r\n|\n|\r/g;

/** The lines of `input`, whose chunks are whole UTF-8 text (`utf8File`) or strings; the last one needs no end. */
export async function* linesOf(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let rest = '';
  // A `\r` ended the previous chunk: a `\n` that starts this one belongs to it.
  let afterCr = false;
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (afterCr && text.startsWith('\n')) text = text.slice(1);
    afterCr = false;
    let start = 0;
    for (const m of text.matchAll(END)) {
      yield rest + text.slice(start, m.index);
      rest = '';
      start = m.index + m[0].length;
    }
    afterCr = text.endsWith('\r');
    rest += text.slice(start);
  }
  if (rest !== '') yield rest;
}
