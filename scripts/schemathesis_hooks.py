"""Schemathesis hooks for patchgate's API document (SCHEMATHESIS_HOOKS=scripts.schemathesis_hooks,
run from the repository root; see .ci/run).

NDJSON bodies (`application/x-ndjson`: `/ladder/report`, `/review`, `/calibrate`) are declared as
arrays of the rows they hold; they are sent one JSON document per line, as the service's own
ledgers and decision log are written.
"""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, list):
        return "".join(json.dumps(row) + "\n" for row in value).encode()
    return json.dumps(value).encode()
