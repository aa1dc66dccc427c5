/**
 * The session id the kernel names after a notebook file: the TypeScript port of
 * durable_nb.session.notebook_session_id (with default_session_name's `.ipynb` cut), which the
 * migration of a notebook from before the extension must reproduce exactly, or the kernel refuses
 * the id and the old session is unreachable. Both sides are tested against one table of names,
 * js/labextension/test/session_names.json (combining marks, NFD, long names in other scripts,
 * astral characters, the 200-character and 200-byte limits).
 *
 * The rule: each code point that is not a letter, a digit (Python's `\w`: Unicode letters and
 * numbers, and `_`), `.` or `-` becomes its own `-` (combining marks too: Python's `\w` has none);
 * leading `.`/`-` dropped; at most 200 code points; over 200 bytes of UTF-8, cut to whole
 * characters within 200 bytes and trailing `.`/`-` dropped; `default` when nothing is left.
 */

export const MAX_ID_BYTES = 200; // durable_nb.session.store.MAX_ID_BYTES
const UNSAFE_CHAR = /[^\p{L}\p{N}_.\-]/gu;

/** `s` cut to at most MAX_ID_BYTES bytes of UTF-8, whole characters only. */
function fit(s: string): string {
  let bytes = 0;
  let out = '';
  for (const ch of s) {
    const n = new TextEncoder().encode(ch).length;
    if (bytes + n > MAX_ID_BYTES) break;
    bytes += n;
    out += ch;
  }
  return out;
}

/** The session id the kernel names after the notebook at `path` (durable_nb.notebook.state.default_session_name). */
export function nameBasedId(path: string): string {
  let name = path.split('/').pop() || '';
  if (name.endsWith('.ipynb')) {
    name = name.slice(0, -'.ipynb'.length);
  }
  const s = Array.from(name.replace(UNSAFE_CHAR, '-').replace(/^[.\-]+/, ''))
    .slice(0, 200)
    .join('');
  const id = new TextEncoder().encode(s).length > MAX_ID_BYTES ? fit(s).replace(/[.\-]+$/, '') : s;
  return id || 'default';
}
