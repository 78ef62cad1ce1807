#!/usr/bin/env bash
# The gate step of the GitHub Action (action.yml at the repository's root): runs
# `patchgate gate` on the pull request's checkout, or on a merge queue's group, puts the
# Markdown report into the job summary, sets the step's outputs, and exits with patchgate's
# exit code (0 go, 1 the patch is wrong, 2 a human must look, 3 the queue is stopped; 0 in
# shadow mode; 64/65/69/70 the gate itself could not decide).
#
# Its inputs come as environment variables (never spliced into the script): PATCHGATE_BASE,
# PATCHGATE_CONFIG_PATH, PATCHGATE_SERVER, PATCHGATE_TOKEN, PATCHGATE_SHADOW, and for a gate
# split over a matrix (issue 53) PATCHGATE_SHARD (K/N: run this job's shard, its facts written
# to PATCHGATE_FACTS; the step succeeds once the shard finished, since a shard decides
# nothing) or PATCHGATE_COMBINE (a directory of the shards' facts, downloaded from this run's
# own artifacts: decide them once; no checkout is read). GitHub sets
# GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_BASE_REF, GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY. On `merge_group` the base is the queue's base commit
# (`merge_group.base_sha`) and the head the group's (`merge_group.head_sha`, which already holds
# the base and the pull requests ahead, so its tree is what lands); on `pull_request` the base
# is `origin/` and the pull request's base branch. An input base overrides either. Tests run it
# with the real binary (tests/gate_example.rs).
set -uo pipefail

base=${PATCHGATE_BASE:-}
queue=()
shard=${PATCHGATE_SHARD:-}
combine=${PATCHGATE_COMBINE:-}
facts=${PATCHGATE_FACTS:-patchgate-shard.json}
if [ -n "$shard" ] && [ -n "$combine" ]; then
  echo "::error title=patchgate::inputs shard and combine are two jobs: give one"; exit 64
fi
if [ -n "$combine" ]; then
  :  # The shards' facts say what was judged: no base, no event, no checkout.
elif [ "${GITHUB_EVENT_NAME:-}" = merge_group ]; then
  # The group's commits and ref, and the pull requests in it (the event names the last in its
  # ref; the group's merge commits name each, in queue order).
  group=$(python3 - "${GITHUB_EVENT_PATH:?the merge_group event}" <<'PY'
import json, re, subprocess, sys
try:
    group = json.load(open(sys.argv[1]))["merge_group"]
    base, head, ref = group["base_sha"], group["head_sha"], group["head_ref"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"::error title=patchgate::the merge_group event has no base_sha, head_sha and head_ref: {e!r}")
if not all(isinstance(c, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", c) for c in (base, head)) \
        or not isinstance(ref, str) or not ref or "\n" in ref:
    sys.exit("::error title=patchgate::the merge_group event's base_sha, head_sha or head_ref is not a commit id or a ref")
numbers = []
def saw(n):
    if n not in numbers:
        numbers.append(n)
log = subprocess.run(["git", "log", "--first-parent", "--reverse", "--format=%B%x00", f"{base}..{head}"],
                     capture_output=True, text=True)
messages = log.stdout.split("\0") if log.returncode == 0 else []
messages.append(((group.get("head_commit") or {}).get("message")) or "")
for message in messages:
    first = message.strip().splitlines()[0] if message.strip() else ""
    m = re.match(r"Merge pull request #(\d+)", first) or re.search(r"\(#(\d+)\)$", first)
    if m:
        saw(int(m.group(1)))
m = re.search(r"/pr-(\d+)-[0-9a-f]+$", ref)
if m:
    saw(int(m.group(1)))
print(base)
print(head)
print(ref)
for n in numbers:
    print(n)
PY
) || exit 65
  mapfile -t fields <<< "$group"
  [ -n "$base" ] || base=${fields[0]}
  queue=(--head "${fields[1]}" --merge-group "${fields[2]}")
  for n in "${fields[@]:3}"; do queue+=(--pull-request "$n"); done
elif [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  base="origin/$GITHUB_BASE_REF"
fi
[ -n "$base" ] || [ -n "$combine" ] || { echo "::error title=patchgate::no base to gate against: set the input base (the event is ${GITHUB_EVENT_NAME:-none}, not pull_request or merge_group)"; exit 64; }
# An empty input is no input: patchgate reads PATCHGATE_SERVER and PATCHGATE_TOKEN itself.
[ -n "${PATCHGATE_SERVER:-}" ] || unset PATCHGATE_SERVER
[ -n "${PATCHGATE_TOKEN:-}" ] || unset PATCHGATE_TOKEN

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$combine" ]; then
  shopt -s nullglob
  shards=("$combine"/*.json)
  # None downloaded is still a decision (ESCALATE evidence-gap), never a skipped check.
  [ "${#shards[@]}" -gt 0 ] || shards=("$combine/no-shard-facts.json")
  args=(gate --combine "${shards[@]}" --json-out "$work/answer.json" --markdown-out "$work/report.md")
else
  args=(gate --base "$base" "${queue[@]}" --config "${PATCHGATE_CONFIG_PATH:-patchgate.toml}"
    --json-out "$work/answer.json" --markdown-out "$work/report.md")
  [ -z "$shard" ] || args+=(--shard "$shard" --facts-out "$facts")
fi
case "${PATCHGATE_SHADOW:-false}" in
  true) args+=(--shadow) ;;
  false | "") ;;
  *) echo "::error title=patchgate::input shadow must be true or false, not ${PATCHGATE_SHADOW}"; exit 64 ;;
esac

patchgate "${args[@]}"
code=$?
# A shard's answer is always ESCALATE evidence-gap (exit 2): it decides nothing. Finished (its
# facts sealed with their digest), the job has done its part; the combine job decides.
if [ -n "$shard" ] && [ "$code" = 2 ] && grep -q '"digest"' "$facts" 2>/dev/null; then
  echo "::notice title=patchgate::shard $shard finished: its facts are in $facts; the combine job decides"
  code=0
fi

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
