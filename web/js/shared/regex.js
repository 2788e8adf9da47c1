// User-typed regular expressions (tag and run filters): case-insensitive, and an invalid one is
// reported rather than throwing.

/**
 * Compile `text` into a filter. Returns {ok, error, test(name)}; an empty or invalid pattern
 * matches everything so the page never goes blank while the user is typing.
 */
export function compileFilter(text) {
  if (!text) return { ok: true, error: null, test: () => true };
  try {
    const re = new RegExp(text, 'i');
    return { ok: true, error: null, test: (name) => re.test(name) };
  } catch (err) {
    return { ok: false, error: err.message, test: () => true };
  }
}
