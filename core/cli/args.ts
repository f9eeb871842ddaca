/** A small, strict argument parser: unknown flags and missing values are usage errors (exit 2). */

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export type FlagType = "string" | "number" | "boolean" | "strings";

export interface CommandSpec {
  /** Names of positional arguments, in order; a trailing "?" makes one optional. */
  positionals: string[];
  flags: Record<string, FlagType>;
  /** Short aliases: { o: "out-file" }. */
  aliases?: Record<string, string>;
}

export interface Parsed {
  pos: Record<string, string | undefined>;
  flags: Record<string, string | number | boolean | string[] | undefined>;
  /** Every positional argument, in order (for commands whose last positional is variadic, "NAME..."). */
  all?: string[];
}

export function parseArgs(cmd: string, argv: string[], spec: CommandSpec): Parsed {
  const pos: string[] = [];
  const flags: Parsed["flags"] = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      pos.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("-") && a.length > 1 && !/^-\d/.test(a)) {
      let name = a.replace(/^--?/, "");
      let inline: string | undefined;
      const eq = name.indexOf("=");
      if (eq >= 0) {
        inline = name.slice(eq + 1);
        name = name.slice(0, eq);
      }
      if (!a.startsWith("--")) name = spec.aliases?.[name] ?? name;
      const type = spec.flags[name];
      if (!type) throw new UsageError(`${cmd}: unknown option ${a.split("=")[0]}`);
      if (type === "boolean") {
        if (inline !== undefined) throw new UsageError(`${cmd}: --${name} takes no value`);
        flags[name] = true;
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${cmd}: --${name} needs a value`);
      if (type === "number") {
        const n = Number(value);
        if (!Number.isFinite(n)) throw new UsageError(`${cmd}: --${name} needs a number, got ${JSON.stringify(value)}`);
        flags[name] = n;
      } else if (type === "strings") {
        flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
      } else flags[name] = value;
      continue;
    }
    pos.push(a);
  }
  const names = spec.positionals;
  const required = names.filter((n) => !n.endsWith("?")).length;
  if (pos.length < required)
    throw new UsageError(
      `${cmd}: missing ${names
        .slice(pos.length)
        .filter((n) => !n.endsWith("?"))
        .join(" ")}`,
    );
  const variadic = names.length > 0 && names[names.length - 1].endsWith("...");
  if (pos.length > names.length && !variadic) throw new UsageError(`${cmd}: unexpected argument ${JSON.stringify(pos[names.length])}`);
  const out: Parsed["pos"] = {};
  names.forEach((n, i) => (out[n.replace(/\?$/, "").replace(/\.\.\.$/, "")] = pos[i]));
  return { pos: out, flags, all: pos };
}

/** A positive integer flag, or the default. */
export function intFlag(p: Parsed, name: string, dflt: number, min = 1): number {
  const v = p.flags[name];
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new UsageError(`--${name} must be an integer ≥ ${min}`);
  return v;
}
