#!/usr/bin/env bash
# The README's first command on a simulated bare machine (issue 48.5): TREE's scripts/demo with a fresh lawindex
# cache, a fresh pip cache, a fresh venv, no docker on PATH (hidden where it is installed), its node on PORT; each line of its output stamped
# with the seconds since it began, then when each thing the start makes appeared in the cache. Stops the node.
#
#   benchmarks/first_minute.sh TREE OUT [PORT]   # e.g. . /tmp/first.log 9350; the venv is made before the clock
#
# For a "before" tree whose demo has no LAWINDEX_DEMO_PORT, give it one (and `echo "== step X" >&2` marks
# between its commands for the steps). benchmarks/RESULTS.md, "The first minute", has the figures.
set -euo pipefail
tree="$(cd "$1" && pwd)" out="$2" port="${3:-9350}"
work="$(mktemp -d -t lawindex-first-minute.XXXXXX)"
chmod 755 "$work"  # as root the node runs as user lawindex, who must reach the cache
trap 'rm -rf "$work"' EXIT
export LAWINDEX_CACHE="$work/cache" PIP_CACHE_DIR="$work/pip" LAWINDEX_DEMO_PORT="$port"
mkdir -p "$LAWINDEX_CACHE"
python3 -m venv "$work/venv"
# The system's commands but Docker's: where docker is installed, a PATH of links to every other command.
mkdir "$work/bin"
for folder in /usr/sbin /usr/bin /sbin /bin; do
  for command in "$folder"/*; do
    name="${command##*/}"
    [[ "$name" == docker* || "$name" == containerd* || -e "$work/bin/$name" ]] || ln -s "$command" "$work/bin/$name"
  done
done
export PATH="$work/venv/bin:$work/bin"
unset PYTHONPATH OPENSEARCH_URL LAWINDEX_RUNTIME
if command -v docker >/dev/null; then
  echo "docker is on PATH ($(command -v docker)): not a bare machine" >&2
  exit 2
fi
began="$(date +%s.%N)"
echo "began $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >"$out"
stamp='import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    print(f"{time.time() - t0:6.1f} {line}", end="", flush=True)'
(cd "$tree" && ./scripts/demo) 2>&1 | python3 -c "$stamp" "$began" >>"$out" || echo "FAILED" >>"$out"
echo "total $(python3 -c "import time; print(f'{time.time() - $began:.1f}')") s" >>"$out"
lawindex opensearch stop --port "$port" >>"$out" 2>&1 || true
echo "ended load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"
made='import os, sys
root, t0 = sys.argv[1], float(sys.argv[2])
rows = []
for folder, subfolders, files in os.walk(root):
    subfolders[:] = [s for s in subfolders if s not in ("home", "data", "logs", "plugins") or "nodes" not in folder]
    for name in files:
        if name in (".lawindex-complete", "node.json") or name.endswith(".zip"):
            path = os.path.join(folder, name)
            rows.append((os.path.getmtime(path) - t0, os.path.relpath(path, root)))
for seconds, path in sorted(rows):
    print(f"made {seconds:6.1f} {path}")'
python3 -c "$made" "$LAWINDEX_CACHE" "$began" >>"$out"
