/**
 * RFC 6266 Content-Disposition with an RFC 5987 `filename*` for non-ASCII
 * names. Filenames come from users, so the output must be safe whatever they
 * contain: no CR/LF/NUL (header injection), no path separators, no bidi or
 * other invisible format characters (U+202E can show "gpj.exe" as "exe.jpg").
 */

const MAX_CODE_POINTS = 255;
const FALLBACK_NAME = 'download';

function isInvisibleOrControl(cp: number): boolean {
  return (
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    cp === 0x061c ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x206f) ||
    cp === 0xfeff ||
    (cp >= 0xfff9 && cp <= 0xfffb)
  );
}

/** The user's name with dangerous characters replaced by `_`; still Unicode. */
export function sanitizeFilename(name: string): string {
  // toWellFormed: a lone surrogate would make encodeURIComponent throw.
  const chars = Array.from(String(name).toWellFormed()).slice(0, MAX_CODE_POINTS);
  const clean = chars
    .map((c) => (c === '/' || c === '\\' || isInvisibleOrControl(c.codePointAt(0)!) ? '_' : c))
    .join('')
    .trim();
  return clean === '' || clean === '.' || clean === '..' ? FALLBACK_NAME : clean;
}

// Inside a quoted-string `"` and `\` would need escaping that many user agents
// get wrong, and `%XX` is wrongly percent-decoded by some (RFC 6266 appx. D).
function asciiFallback(clean: string): string {
  return Array.from(clean, (c) => {
    const cp = c.codePointAt(0)!;
    return cp >= 0x20 && cp <= 0x7e && c !== '"' && c !== '\\' && c !== '%' ? c : '_';
  }).join('');
}

/** RFC 5987 ext-value: everything outside attr-char is UTF-8 percent-encoded. */
function encodeExtValue(clean: string): string {
  // encodeURIComponent leaves `*'()` alone, but they are not attr-chars.
  const encoded = encodeURIComponent(clean).replace(/[*'()]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `UTF-8''${encoded}`;
}

export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const clean = sanitizeFilename(filename);
  const fallback = asciiFallback(clean);
  const header = `${type}; filename="${fallback}"`;
  return fallback === clean ? header : `${header}; filename*=${encodeExtValue(clean)}`;
}
