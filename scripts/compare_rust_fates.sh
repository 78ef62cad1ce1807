#!/bin/bash
# Each examples/gate-rust patch gated by two patchgate binaries (before and after a change):
# the exit, the disposition, the reason and every patch mutant's fate (line, operator, state,
# killed by), one line per binary, to compare.
#   scripts/compare_rust_fates.sh OLD_BINARY NEW_BINARY
set -u
example=$(cd "$(dirname "$0")/../examples/gate-rust" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
for file in "$example"/patches/*.patch; do
  patch=$(basename "$file" .patch)
  case $patch in *.base) continue ;; esac
  rm -rf "$work/repo" && cp -r "$example/repo" "$work/repo" && cd "$work/repo" || exit 1
  git init -q -b main && git add -A && git commit -qm base
  git checkout -qb patch && git apply "$file" && git add -A && git commit -qm patch && git checkout -q main
  for bin in "$1" "$2"; do
    "$bin" gate --base main --head patch --json 2>/dev/null > "$work/answer.json"
    python3 - "$patch" "$bin" "$?" "$work/answer.json" <<'PY'
import json, sys
patch, binary, code, path = sys.argv[1:]
try:
    a = json.load(open(path))
except ValueError:
    sys.exit(print(patch, binary, code, "no answer"))
fates = [(m["line"], m["operator"], m["state"], m.get("killed_by"))
         for s in a.get("steps", []) if s.get("step") == "observe" and s.get("facts")
         for m in s["facts"].get("mutants", [])]
print(patch, binary, code, a["disposition"], a["reason"], fates)
PY
  done
done
