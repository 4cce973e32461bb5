/**
 * Elysia answers a known path with an unknown method as "not found". The contract wants 405 with
 * an Allow header, so this index is built from the app's own route table after every route is
 * registered and consulted only on the not-found path.
 */
export interface RouteLike {
  method: string;
  path: string;
}

export class MethodIndex {
  private readonly patterns: { method: string; re: RegExp }[];

  constructor(routes: RouteLike[]) {
    this.patterns = routes
      .filter((r) => r.method !== "ALL")
      .map((r) => ({ method: r.method.toUpperCase(), re: toRegExp(r.path) }));
  }

  /** Methods that would have matched this path; empty means the path itself is unknown. */
  allowed(pathname: string): string[] {
    const out = new Set<string>();
    for (const p of this.patterns) if (p.re.test(pathname)) out.add(p.method);
    if (out.has("GET")) out.add("HEAD");
    return [...out].sort();
  }
}

function toRegExp(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => {
      if (seg === "*") return ".*";
      if (seg.startsWith(":")) return "[^/]+";
      return seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${body}/?$`);
}
