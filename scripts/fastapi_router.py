"""The article's three-gate router as a FastAPI service: the Python baseline of
`scripts/bench_http.py load --fastapi` (pip install fastapi uvicorn).

The same decision table as `POST /route` (missing outranks fail, fail is absorbing, unknown is
never a pass), with the evidence validated by pydantic as a FastAPI service would validate it;
no decision log, request id, metrics or limits.
"""
from enum import Enum
from typing import Optional

from fastapi import FastAPI
from pydantic import BaseModel


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    MISSING = "missing"


class Evidence(BaseModel):
    patch_id: Optional[str] = None
    property_check: Verdict
    fixture_check: Verdict
    flaky_freeze: Verdict


def decide(e: Evidence):
    verdicts = (e.property_check, e.fixture_check, e.flaky_freeze)
    if Verdict.MISSING in verdicts:
        return "ESCALATE", "evidence-gap"
    if Verdict.FAIL in verdicts:
        prop, fixture = e.property_check is Verdict.FAIL, e.fixture_check is Verdict.FAIL
        if prop and fixture:
            return "BLOCK", "behavior-and-invariant"
        if fixture:
            return "BLOCK", "concrete-behavior"
        return "BLOCK", "invariant-or-over-specified-property"
    if Verdict.UNKNOWN in verdicts:
        return "ESCALATE", "inadmissible-evidence"
    return "MERGE_OK", "all-gates-held"


app = FastAPI()


@app.post("/route")
async def route(e: Evidence):
    disposition, attribution = decide(e)
    return {"patch_id": e.patch_id, "disposition": disposition, "attribution": attribution,
            "exit_code": {"MERGE_OK": 0, "BLOCK": 1, "ESCALATE": 2}[disposition]}
