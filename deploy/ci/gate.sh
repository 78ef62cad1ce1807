#!/bin/sh
# Route one evidence document through a patchgate server with curl alone; this script's exit
# code follows the HTTP status (0 MERGE_OK, 1 BLOCK, 2 ESCALATE, 3 queue stopped; 64 when the
# server refuses the credentials; 69 for anything else that is not a decision, never 0). The
# answer's one line goes to stdout; curl's own errors to stderr.
#   PATCHGATE_SERVER=https://patchgate.example.org PATCHGATE_TOKEN=... ./gate.sh evidence.json
# The base-ref rule: the evidence must be produced in the same job by a gate that read its
# rules from the base commit (`patchgate gate --base ... --evidence-out evidence.json`), never
# a file committed with the patch: a patch that brings its own evidence decides its own fate.
set -u
evidence=${1:?usage: gate.sh evidence.json}
server=${PATCHGATE_SERVER:?set PATCHGATE_SERVER}
auth=""
[ -n "${PATCHGATE_TOKEN:-}" ] && auth="Authorization: Bearer $PATCHGATE_TOKEN"
body=$(mktemp) || exit 70
trap 'rm -f "$body"' EXIT
status=$(curl -sS -o "$body" -w '%{http_code}' -X POST "$server/route" \
  -H 'Content-Type: application/json' -H 'Accept: text/plain' ${auth:+-H "$auth"} \
  --data-binary @"$evidence") || exit 69
case "$status" in
  200) cat "$body"; exit 0 ;;
  409) cat "$body"; exit 1 ;;
  424) cat "$body"; exit 2 ;;
  423) cat "$body"; exit 3 ;;
  401|403) echo "patchgate refused the credentials ($status): check PATCHGATE_TOKEN" >&2; exit 64 ;;
  *) echo "patchgate answered $status: not a decision" >&2; cat "$body" >&2; exit 69 ;;
esac
