export class UsageError extends Error {}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string>;
}

/**
 * Strict flag parser: `--name value`, `--name=value` and boolean `--name`. A flag the command
 * does not declare is an error, so a typo never silently falls back to a default.
 */
export function parseArgs(argv: string[], spec: { values?: string[]; booleans?: string[] }): ParsedArgs {
  const values = new Set(spec.values ?? []);
  const booleans = new Set(spec.booleans ?? []);
  const out: ParsedArgs = { positionals: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      // "-5" is a (negative) value for the command to judge, not an option.
      if (arg.startsWith("-") && arg !== "-" && !/^-\d/.test(arg))
        throw new UsageError(`unknown option ${arg}`);
      out.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (booleans.has(name)) {
      if (eq !== -1) throw new UsageError(`option --${name} takes no value`);
      out.flags[name] = "true";
    } else if (values.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) {
        throw new UsageError(`option --${name} needs a value`);
      }
      out.flags[name] = value;
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return out;
}
