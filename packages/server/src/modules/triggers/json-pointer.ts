// RFC 6901 JSON Pointer, read-only: `""` is the whole document, `/a/0/b~1c` walks objects and arrays.

export function resolvePointer(
  doc: unknown,
  pointer: string,
): { found: true; value: unknown } | { found: false } {
  if (pointer === '') return { found: true, value: doc };
  if (!pointer.startsWith('/')) return { found: false };
  let cur: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= cur.length) return { found: false };
      cur = cur[Number(token)];
    } else if (cur && typeof cur === 'object' && Object.hasOwn(cur, token)) {
      cur = (cur as Record<string, unknown>)[token];
    } else return { found: false };
  }
  return { found: true, value: cur };
}
