import type { Access } from './access';

export type RouteInfo = { method: string; url: string; access: Access | undefined; hidden: boolean };

/** Fastify path → RegExp; `::` is an escaped literal colon (`/keys/:slug(re)::rotate`). */
export function routeRegex(url: string): RegExp {
  let out = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i];
    if (c === ':') {
      if (url[i + 1] === ':') {
        out += ':';
        i++;
        continue;
      }
      let j = i + 1;
      while (j < url.length && /[A-Za-z0-9_]/.test(url[j])) j++;
      // A constrained parameter `:name(regex)`: the constraint is checked by the router.
      if (url[j] === '(') j = url.indexOf(')', j) + 1;
      out += '([^/]+?)';
      i = j - 1;
      continue;
    }
    out += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** For a 405: which methods the registered routes accept at a concrete path. */
export function routeMatcher(table: RouteInfo[]): (url: string) => string[] {
  let compiled: { method: string; re: RegExp }[] | null = null;
  return (url: string) => {
    compiled ??= table.map((r) => ({ method: r.method, re: routeRegex(r.url) }));
    const path = url.split('?')[0];
    return [...new Set(compiled.filter((r) => r.re.test(path)).map((r) => r.method))];
  };
}
