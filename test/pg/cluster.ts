/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: initdb into a temporary folder, its own
 * superuser, a free loopback port, fsync off; stopped and removed by {@link PgCluster.stop}, and
 * killed when this process exits whatever happens. Running as root (CI containers), initdb and
 * postgres refuse to start, so they run as the `postgres` system user via runuser, in a folder it
 * owns. Debian's `postgresql` package provides the binaries (.ci/run installs it).
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Client } from "pg";

/** The folder of initdb/postgres, or undefined when PostgreSQL is not installed. */
export function pgBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  let versions: string[] = [];
  try {
    versions = fs
      .readdirSync(root)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    return undefined;
  }
  for (const v of versions) if (fs.existsSync(path.join(root, v, "bin", "postgres"))) return path.join(root, v, "bin");
  return undefined;
}

/**
 * Whether tests that need PostgreSQL can run. With CI set, a missing PostgreSQL is an error, never
 * a silent skip.
 */
export function pgAvailable(): boolean {
  const have = pgBinDir() !== undefined;
  if (!have && process.env.CI) throw new Error("PostgreSQL is not installed (apt-get install postgresql; .ci/run does): the store tests cannot run");
  return have;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

const live = new Set<ChildProcess>();
const postmasters = new Set<() => number | undefined>();
process.once("exit", () => {
  for (const pid of postmasters) {
    try {
      const p = pid();
      if (p) process.kill(p, "SIGQUIT"); // immediate shutdown
    } catch {
      /* gone */
    }
  }
  for (const c of live) if (c.exitCode === null) c.kill("SIGKILL");
});

export class PgCluster {
  private child: ChildProcess | undefined;
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly user: string,
    private readonly bin: string,
    private readonly asUser: string[],
  ) {}

  get url(): string {
    return `postgresql://${this.user}@127.0.0.1:${this.port}/postgres`;
  }

  /** Creates and starts a cluster. */
  static async start(): Promise<PgCluster> {
    const bin = pgBinDir();
    if (!bin) throw new Error("PostgreSQL is not installed");
    const root = process.getuid?.() === 0;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-store-pg-"));
    const asUser = root ? ["runuser", "-u", "postgres", "--"] : [];
    if (root) {
      const pw = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
      const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
      if (pw.status !== 0) throw new Error("running as root needs the postgres system user (Debian's postgresql package creates it)");
      fs.chownSync(dir, Number(pw.stdout.trim()), Number(gid.stdout.trim()));
    }
    const user = "causeway_test";
    const data = path.join(dir, "data");
    const run = (cmd: string, args: string[]) => {
      const [exe, ...rest] = asUser.length ? [...asUser, cmd, ...args] : [cmd, ...args];
      const r = spawnSync(exe, rest, { encoding: "utf8", timeout: 120_000 });
      if (r.status !== 0) throw new Error(`${path.basename(cmd)} failed: ${r.stderr || r.stdout || r.error?.message}`);
    };
    run(path.join(bin, "initdb"), ["-D", data, "-U", user, "--auth=trust", "--encoding=UTF8", "--no-sync"]);
    const c = new PgCluster(dir, await freePort(), user, bin, asUser);
    await c.startServer();
    return c;
  }

  /** Starts postgres on the cluster's folder and port, and waits until it accepts connections. */
  async startServer(): Promise<void> {
    const data = path.join(this.dir, "data");
    const args = [
      "-D",
      data,
      "-p",
      String(this.port),
      "-k",
      this.dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=200",
    ];
    const [exe, ...rest] = this.asUser.length ? [...this.asUser, path.join(this.bin, "postgres"), ...args] : [path.join(this.bin, "postgres"), ...args];
    const child = spawn(exe, rest, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err = (err + d).slice(-4000)));
    live.add(child);
    child.once("exit", () => live.delete(child));
    this.child = child;
    postmasters.add(this.pidFn);
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`postgres exited at start: ${err}`);
      const cl = new Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
      try {
        await cl.connect();
        await cl.end();
        return;
      } catch {
        await cl.end().catch(() => undefined);
        if (i > 600) throw new Error(`postgres did not accept connections: ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Stops the server (fast shutdown), keeping the data: {@link startServer} starts it again. */
  async stopServer(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    // signal the postmaster itself (under runuser it is not our child): SIGINT is a fast shutdown
    const pid = this.postmasterPid() ?? child.pid!;
    try {
      process.kill(pid, "SIGINT");
    } catch {
      /* already gone */
    }
    const t = setTimeout(() => {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
      child.kill("SIGKILL");
    }, 20_000);
    await exited;
    clearTimeout(t);
  }

  private readonly pidFn = () => this.postmasterPid();
  private postmasterPid(): number | undefined {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops the server and removes the cluster. */
  async stop(): Promise<void> {
    await this.stopServer();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** A fresh database on this cluster (one per test file keeps them apart). */
  async createDatabase(name: string): Promise<string> {
    const cl = new Client({ connectionString: this.url });
    await cl.connect();
    try {
      await cl.query(`CREATE DATABASE ${name.replace(/[^a-z0-9_]/g, "_")}`);
    } finally {
      await cl.end();
    }
    return `postgresql://${this.user}@127.0.0.1:${this.port}/${name.replace(/[^a-z0-9_]/g, "_")}`;
  }
}
