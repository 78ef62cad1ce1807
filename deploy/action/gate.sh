#!/usr/bin/env bash
# The gate step of the GitHub Action (action.yml at the repository's root): runs
# `patchgate gate` on the pull request's checkout, puts the Markdown report into the job
# summary, sets the step's outputs, and exits with patchgate's exit code (0 go, 1 the patch is
# wrong, 2 a human must look, 3 the queue is stopped; 0 in shadow mode; 64/65/69/70 the gate
# itself could not decide).
#
# Its inputs come as environment variables (never spliced into the script): PATCHGATE_BASE,
# PATCHGATE_CONFIG_PATH, PATCHGATE_SERVER, PATCHGATE_TOKEN, PATCHGATE_SHADOW; GitHub sets
# GITHUB_OUTPUT and GITHUB_STEP_SUMMARY. A test runs it with the real binary
# (tests/ci_templates.rs).
set -uo pipefail

: "${PATCHGATE_BASE:?the base to gate against: the input base, or the base branch of the pull request}"
# An empty input is no input: patchgate reads PATCHGATE_SERVER and PATCHGATE_TOKEN itself.
[ -n "${PATCHGATE_SERVER:-}" ] || unset PATCHGATE_SERVER
[ -n "${PATCHGATE_TOKEN:-}" ] || unset PATCHGATE_TOKEN

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(gate --base "$PATCHGATE_BASE" --config "${PATCHGATE_CONFIG_PATH:-patchgate.toml}"
  --json-out "$work/answer.json" --markdown-out "$work/report.md")
case "${PATCHGATE_SHADOW:-false}" in
  true) args+=(--shadow) ;;
  false | "") ;;
  *) echo "::error title=patchgate::input shadow must be true or false, not ${PATCHGATE_SHADOW}"; exit 64 ;;
esac

patchgate "${args[@]}"
code=$?

# The report is bounded (under 1 MiB, the job summary's limit, whatever the input).
if [ -s "$work/report.md" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$work/report.md" >> "$GITHUB_STEP_SUMMARY"
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  python3 - "$work/answer.json" "$code" >> "$GITHUB_OUTPUT" <<'PY'
import json, secrets, sys
path, code = sys.argv[1], sys.argv[2]
try:
    answer = json.load(open(path))
except (OSError, ValueError):
    answer = {}
print(f"exit-code={code}")
for key, field in (("disposition", "disposition"), ("reason", "reason"), ("decision-id", "decision_id")):
    print(f"{key}={answer.get(field, '')}")
# The whole answer, on as many lines as it takes (a delimiter no answer contains).
delimiter = "patchgate_" + secrets.token_hex(16)
print(f"answer<<{delimiter}")
print(json.dumps(answer) if answer else "")
print(delimiter)
PY
fi
exit "$code"
