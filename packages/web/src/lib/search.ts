// Search params are the state of a screen: every filter lives in the URL so it can be shared.
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

export function strings<K extends string>(keys: readonly K[]) {
  return (s: Record<string, unknown>): { [k in K]?: string } => {
    const out: { [k in K]?: string } = {};
    for (const k of keys) {
      const v = str(s[k]);
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
}
