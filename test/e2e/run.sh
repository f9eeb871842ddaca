#!/usr/bin/env bash
# Builds the .vsix, installs it into a scratch code-server profile, starts code-server (real
# VS Code 1.100.3) on a free loopback port, runs the Playwright scenarios with node:test, and
# always stops code-server (its whole process group) on exit. Run test/e2e/setup.sh once first.
#
# Env: SHOTS_DIR (default test/e2e/shots), WORKSPACE_TRUST (true|false, default false),
#      SCENARIOS (default test/e2e/scenarios/; a file or folder), SKIP_PACKAGE=1 (reuse
#      build/causeway.vsix), VSIX (another .vsix to install, with SKIP_PACKAGE=1: the runs-list
#      bench's control, bench/control-tree), KEEP_WORK=1 (keep the scratch dir), PORT, CHROMIUM,
#      E2E_TIMEOUT_SCALE (default 1: every timeout of the scenarios times this; .ci/run sets 4).
# WORKSPACE_TRUST=true: the folder opens untrusted (Restricted Mode). A scenario that needs a
# second instance with trust enabled calls lib.mjs startCodeServer({ trust: true }) (README.md);
# its PID goes to CS_PIDS_FILE so the trap below kills it too.
set -euo pipefail
T_START=$(date +%s%N)
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CS_BIN="$HERE/code-server/node_modules/.bin/code-server"
VSIX="${VSIX:-$ROOT/build/causeway.vsix}"  # another .vsix with SKIP_PACKAGE=1 (bench/control-tree)
SHOTS_DIR="${SHOTS_DIR:-$HERE/shots}"
WORKSPACE_TRUST="${WORKSPACE_TRUST:-false}"
SCENARIOS="${SCENARIOS:-$HERE/scenarios/}"
[ -x "$CS_BIN" ] || { echo "code-server missing: run bash test/e2e/setup.sh first" >&2; exit 1; }
mkdir -p "$HERE/.cache" "$SHOTS_DIR"
WORK="$(mktemp -d "$HERE/.cache/run.XXXXXX")"
CS_PIDS_FILE="$WORK/code-server.pids"   # one PID (= process group id) per line; lib.mjs appends too
: > "$CS_PIDS_FILE"
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

cleanup() {
  local rc=$? pid t0
  t0=$(date +%s%N)
  # Every code-server was started as a process-group leader (setsid): signal the whole group
  # so the server, its extension host and file watchers die with it. The extension host may
  # ignore SIGTERM: SIGKILL whatever is left of the group after 3 s.
  while read -r pid; do
    [ -n "$pid" ] || continue
    kill -TERM -- "-$pid" 2>/dev/null || true
  done < "$CS_PIDS_FILE"
  while read -r pid; do
    [ -n "$pid" ] || continue
    for _ in $(seq 1 30); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done < "$CS_PIDS_FILE"
  [ ! -s "$CS_PIDS_FILE" ] || echo "code-server stopped in $(ms_since "$t0") ms"
  if [ "${KEEP_WORK:-0}" = 1 ] || [ "$rc" != 0 ]; then
    echo "work dir kept: $WORK (code-server logs: $WORK/*.log)"
  else
    rm -rf "$WORK"
  fi
  echo "e2e: exit $rc, total wall time $(( $(ms_since "$T_START") / 1000 )).$(( $(ms_since "$T_START") % 1000 / 100 )) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# make_profile DIR TRUST: a scratch user-data-dir + extensions-dir with our settings and the .vsix.
make_profile() {
  local dir="$1" trust="$2"
  mkdir -p "$dir/ud/User" "$dir/ext" "$dir/xdg"
  node -e 'const fs=require("fs");const s=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
    s["security.workspace.trust.enabled"]=process.argv[2]==="true";
    fs.writeFileSync(process.argv[3],JSON.stringify(s,null,2))' \
    "$HERE/settings.json" "$trust" "$dir/ud/User/settings.json"
  XDG_CONFIG_HOME="$dir/xdg" XDG_DATA_HOME="$dir/xdg" "$CS_BIN" --config "$dir/xdg/config.yaml" \
    --user-data-dir "$dir/ud" --extensions-dir "$dir/ext" --install-extension "$VSIX" >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log"; return 1; }
}

# prepare_workspace DEST [FIXTURE]: the folder code-server opens. Copies
# test/e2e/fixtures/FIXTURE/ (default: workspace) if it exists, else leaves DEST empty.
# Scenario-specific preparation (e.g. generating runs/ folders) goes here or, per scenario,
# in lib.mjs makeWorkspace().
prepare_workspace() {
  local dest="$1" fixture="${2:-workspace}"
  mkdir -p "$dest"
  if [ -d "$HERE/fixtures/$fixture" ]; then cp -a "$HERE/fixtures/$fixture/." "$dest/"; fi
}

# start_code_server NAME PROFILE_DIR PORT FOLDER: starts code-server in its own process group,
# records its PID, waits for /healthz. Sets CS_PID.
start_code_server() {
  local name="$1" dir="$2" port="$3" folder="$4" t0
  t0=$(date +%s%N)
  XDG_CONFIG_HOME="$dir/xdg" XDG_DATA_HOME="$dir/xdg" setsid "$CS_BIN" --config "$dir/xdg/config.yaml" \
    --user-data-dir "$dir/ud" --extensions-dir "$dir/ext" \
    --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
    --disable-getting-started-override "$folder" >"$WORK/$name.log" 2>&1 < /dev/null &
  CS_PID=$!
  echo "$CS_PID" >> "$CS_PIDS_FILE"
  node -e '
    const [url, pid] = process.argv.slice(1); const t0 = Date.now();
    (async () => { for (;;) {
      try { process.kill(+pid, 0); } catch { console.error("code-server exited"); process.exit(1); }
      try { if ((await fetch(url)).ok) return; } catch {}
      if (Date.now() - t0 > 60000) { console.error("timeout waiting for " + url); process.exit(1); }
      await new Promise((r) => setTimeout(r, 100));
    } })();' "http://127.0.0.1:$port/healthz" "$CS_PID" || { cat "$WORK/$name.log"; return 1; }
  echo "code-server '$name' pid $CS_PID up on 127.0.0.1:$port after $(ms_since "$t0") ms"
}

# 1. Build the .vsix (repo root: esbuild --production + vsce package).
t=$(date +%s%N)
if [ "${SKIP_PACKAGE:-0}" = 1 ] && [ -f "$VSIX" ]; then
  echo "package: reusing $VSIX"
else
  # vsce does not create the --out folder (ENOENT on build/causeway.vsix otherwise)
  mkdir -p "$ROOT/build"
  (cd "$ROOT" && npm run -s package)
  echo "package: $(ms_since "$t") ms"
fi

# 2. Profile, workspace, code-server.
t=$(date +%s%N)
make_profile "$WORK/main" "$WORKSPACE_TRUST"
echo "install .vsix: $(ms_since "$t") ms"
prepare_workspace "$WORK/ws"
PORT="${PORT:-$(free_port)}"
start_code_server main "$WORK/main" "$PORT" "$WORK/ws"

# 3. Scenarios (each file: own browser; all share this code-server unless they start another
#    one with lib.mjs startCodeServer()).
t=$(date +%s%N)
export E2E_TIMEOUT_SCALE="${E2E_TIMEOUT_SCALE:-1}"
echo "scenarios: timeouts x$E2E_TIMEOUT_SCALE (E2E_TIMEOUT_SCALE); load average $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$ROOT"
CS_URL="http://127.0.0.1:$PORT" WS_DIR="$WORK/ws" WORK_DIR="$WORK" SHOTS_DIR="$SHOTS_DIR" \
  VSIX="$VSIX" CS_BIN="$CS_BIN" CS_PIDS_FILE="$CS_PIDS_FILE" WORKSPACE_TRUST="$WORKSPACE_TRUST" \
  E2E_SETTINGS="$HERE/settings.json" E2E_FIXTURES="$HERE/fixtures" \
  node --test --test-concurrency=1 "$SCENARIOS"
echo "scenarios: $(ms_since "$t") ms; screenshots in $SHOTS_DIR"
