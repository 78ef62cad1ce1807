#!/usr/bin/env python3
"""The page for people (`GET /`) in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium loads it from a live `patchgate serve`, decides three
documents through the form (a go, a block, an escalation), checks the disposition, the rule
shown and the highlighted row of the 64-row table, and, against a server that needs a token,
that the form asks for it and then decides. The review section: a decision log, a ladder
ledger and calibration rows (fixtures written below) are chosen as files, and each chart's
table holds the numbers the endpoint answers for the same file; a file that is not JSON, a
ledger with a bad row and a 1 GiB file each get a message saying what was wrong. No console
errors, no CSP violations. Saves screenshots under --out.

    sudo apt-get install chromium chromium-driver && python3 -m pip install selenium
    cargo build && python3 scripts/page_test.py --binary target/debug/patchgate --out target/page-test
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

TOKEN = "page-test-token-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(binary, token=None):
    port = free_port()
    env = dict(os.environ)
    env.pop("PATCHGATE_TOKEN", None)
    if token:
        env["PATCHGATE_TOKEN"] = token
    proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("the server did not start")


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,2200"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=opts, service=service)


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAIL {what}")
    print(f"ok   {what}", flush=True)


def wait(driver, fn, what, timeout=10):
    try:
        return WebDriverWait(driver, timeout).until(lambda d: fn(d))
    except Exception:  # noqa: BLE001 - a timeout is the failure being reported
        raise SystemExit(f"FAIL {what} (waited {timeout} s)")


def decide(driver, triple):
    form = driver.find_element(By.ID, "decide")
    for gate, word in zip(("property_check", "fixture_check", "flaky_freeze"), triple):
        Select(form.find_element(By.NAME, gate)).select_by_visible_text(word)
    previous = driver.find_elements(By.ID, "disposition")
    driver.find_element(By.ID, "decide-button").click()
    if previous:
        wait(driver, EC.staleness_of(previous[0]), "the previous answer was replaced")
    return wait(driver, lambda d: d.find_elements(By.ID, "disposition") or d.find_elements(By.ID, "token-label")
                if d.find_element(By.ID, "result").text not in ("", "deciding…") else None,
                f"an answer for {triple}")


def severe_logs(driver):
    """Console errors, CSP violations, failed loads — except the decisions themselves: a BLOCK
    is a 409, an ESCALATE a 424 and an asked-for token a 401 by design, and Chromium logs every
    non-2xx answer to fetch() as a failed load."""
    decided = [f"/route - Failed to load resource: the server responded with a status of {s}"
               for s in (401, 409, 424)]
    # The review's bad inputs are refused by design too (a 422 naming the line).
    decided += [f"{p} - Failed to load resource: the server responded with a status of 422"
                for p in ("/review", "/ladder/report")]
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
            and not (e.get("source") == "network" and any(d in e["message"] for d in decided))]


def fixture_files(out):
    """A decision log over three weeks (router and gate decisions, a quorum line with the
    freeze debt, start-up lines), a ladder ledger, calibration rows, and the bad inputs."""
    def line(ts, endpoint, i, **fields):
        head = {"timestamp": ts, "level": "INFO", "target": "patchgate::decision",
                "endpoint": endpoint, "request_id": "r", "decision_id": f"d{i}"}
        return json.dumps({**head, **fields, "message": "decision"})
    log = ['{"timestamp":"2026-11-02T09:00:00.000000Z","level":"INFO","target":"patchgate","message":"listening"}']
    plan = [
        ("2026-11-02", "route", "MERGE_OK", "all-gates-held"), ("2026-11-03", "route", "BLOCK", "concrete-behavior"),
        ("2026-11-04", "gate", "ESCALATE", "inadmissible-evidence"), ("2026-11-05", "route", "ESCALATE", "evidence-gap"),
        ("2026-11-10", "gate", "MERGE_OK", "all-gates-held"), ("2026-11-11", "route", "BLOCK", "invariant-or-over-specified-property"),
        ("2026-11-16", "gate", "ESCALATE", "inadmissible-evidence"), ("2026-11-17", "gate", "ESCALATE", "inadmissible-evidence"),
        ("2026-11-18", "route", "MERGE_OK", "all-gates-held"),
    ]
    for i, (day, endpoint, disposition, attribution) in enumerate(plan):
        extra = {"debt_counted": 2 + i // 3, "debt_cap": 5} if endpoint == "gate" else {}
        log.append(line(f"{day}T10:00:00.000000Z", endpoint, i, patch_id=f"pr-{i}", disposition=disposition,
                        attribution=attribution, **extra))
    log.append(line("2026-11-12T10:00:00.000000Z", "quorum", 99, outcome="promote", debt_counted=4, debt_cap=5))
    # A gate rule's decision (a guard hit): the attributions count it too (issue 67).
    log.append(line("2026-11-19T10:00:00.000000Z", "gate", 98, patch_id="pr-98", disposition="ESCALATE",
                    reason="guarded-input-edited"))
    ledger = [{"patch": f"p{i}", "tier": tier, "verdict": verdict, "seconds": seconds}
              for i, (tier, verdict, seconds) in enumerate([
                  ("t0-scope", "pass", 0.01), ("t1-properties", "caught", 2.0), ("t1-properties", "pass", 2.5),
                  ("t2-fixtures", "caught", 30.0), ("t2-fixtures", "pass", 28.0), ("t2-fixtures", "error", 1.0)])]
    rows = [{"attribution": a, "fix_files": files, "fix_changed": c, "decision_id": f"d{i}"}
            for i, (a, files, c) in enumerate([
                ("concrete-behavior", ["shop/pricing.py"], "production"),
                ("concrete-behavior", ["tests/test_pricing.py"], "check"),
                ("invariant-or-over-specified-property", ["properties/test_x.py"], "check"),
                ("inadmissible-evidence", ["freeze-ledger.json"], "check")])]
    files = {
        "decisions.jsonl": "\n".join(log) + "\n",
        "ladder.jsonl": "".join(json.dumps(r) + "\n" for r in ledger),
        "rows.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
        "notes.txt": "these are notes\nnot a log\n",
        "bad-ledger.jsonl": json.dumps(ledger[0]) + "\n" + json.dumps({**ledger[1], "verdict": "passed"}) + "\n",
    }
    paths = {}
    for name, text in files.items():
        paths[name] = os.path.join(out, name)
        with open(paths[name], "w") as f:
            f.write(text)
    huge = os.path.join(out, "huge.jsonl")
    with open(huge, "wb") as f:
        f.truncate(1 << 30)  # sparse: 1 GiB that takes no disk
    paths["huge.jsonl"] = huge
    return paths


def post(url, path, body):
    req = urllib.request.Request(url + path, data=body, method="POST",
                                 headers={"Content-Type": "application/x-ndjson", "Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.load(res)


def cells(driver, figure_id):
    """The raw values of a chart's table, row by row (`data-value`)."""
    rows = driver.find_elements(By.CSS_SELECTOR, f"#{figure_id} tbody tr")
    return [[td.get_attribute("data-value") for td in r.find_elements(By.TAG_NAME, "td")] for r in rows]


def same(cell, value):
    if value is None:
        return cell == "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return cell is not None and abs(float(cell) - value) < 1e-12
    return cell == str(value)


def choose(driver, paths):
    driver.find_element(By.ID, "review-files").send_keys("\n".join(paths))


def review_checks(driver, url, out):
    # A browser takes a file to upload by its absolute path only.
    out = os.path.abspath(out)
    files = fixture_files(out)
    review = post(url, "/review", open(files["decisions.jsonl"], "rb").read())
    report = post(url, "/ladder/report", open(files["ladder.jsonl"], "rb").read())
    calibration = post(url, "/calibrate", open(files["rows.jsonl"], "rb").read())
    choose(driver, [files["decisions.jsonl"], files["ladder.jsonl"], files["rows.jsonl"]])
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#charts section")) == 3 or None,
         "the three files are drawn")
    for fid in ("chart-escalation", "chart-dispositions", "chart-attributions", "chart-debt", "chart-yield",
                "chart-calibration"):
        figure = driver.find_element(By.ID, fid)
        check(figure.find_elements(By.CSS_SELECTOR, "svg") and figure.find_elements(By.CSS_SELECTOR, "table"),
              f"{fid}: a chart and its table")
    weeks = [w for w in review["by_week"] if w["decisions"] > 0]
    check(len(weeks) == 3, "the log's decisions fall in three weeks")
    want = [[w["week"], w["decisions"], w["escalation_rate"], w["inadmissible_share"]] for w in weeks]
    got = cells(driver, "chart-escalation")
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"escalation rate per week: the table is /review's ({got} vs {want})")
    check(driver.find_elements(By.CSS_SELECTOR, "#chart-escalation svg line.limit"), "the 40% line is drawn")
    keys = sorted({k for w in weeks for k in w["by_disposition"]})
    want = [[w["week"]] + [w["by_disposition"].get(k, 0) for k in keys] for w in weeks]
    got = cells(driver, "chart-dispositions")
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"dispositions per week: the table is /review's ({got})")
    keys = sorted({k for w in weeks for k in w["by_reason"]})
    want = [[w["week"]] + [w["by_reason"].get(k, 0) for k in keys] for w in weeks]
    got = cells(driver, "chart-attributions")
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          "attributions per week: the table is /review's, every decision counted")
    check("guarded-input-edited" in keys and sum(sum(w["by_reason"].values()) for w in weeks)
          == sum(w["decisions"] for w in weeks), "the attributions add up to the decisions, gate rules' included")
    debt = [w for w in review["by_week"] if w.get("freeze_debt") is not None]
    want = [[w["week"], w["freeze_debt"], w["debt_cap"]] for w in debt]
    got = cells(driver, "chart-debt")
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"freeze debt per week: the table is /review's ({got} vs {want})")
    want = [[t["tier"], t["runs"], t["caught"], t["errors"], t["total_s"], t["yield_per_s"]] for t in report["tiers"]]
    got = cells(driver, "chart-yield")
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"yield per tier: the table is /ladder/report's ({got})")
    bars = driver.find_elements(By.CSS_SELECTOR, "#chart-yield svg rect")
    check(len(bars) == sum(1 for t in report["tiers"] if t["yield_per_s"]), "one bar per tier that caught")
    want = [[c["attribution"], c["count"], c["production"], c["check"], c["both"], c["points_to"], c["hit_rate"]]
            for c in calibration]
    got = [g[:7] for g in cells(driver, "chart-calibration")]
    check(len(got) == len(want) and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"calibration: the table is /calibrate's, with its hit rates ({got})")
    driver.execute_script("document.getElementById('review-h').scrollIntoView()")
    driver.save_screenshot(os.path.join(out, "page-review.png"))
    # Dark mode: the charts' text and lines follow the scheme.
    text_fill = "return getComputedStyle(document.querySelector('#chart-escalation svg text')).fill"
    light = driver.execute_script(text_fill)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    dark = driver.execute_script(text_fill)
    check(light != dark, f"in dark mode the charts' text is drawn in the scheme's colour ({light} then {dark})")
    driver.save_screenshot(os.path.join(out, "page-review-dark.png"))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    # A directory of kept gate answers: the page sends them to /review one per line.
    answers = os.path.join(out, "answers")
    os.makedirs(answers, exist_ok=True)
    kept = []
    for i, (ms, disposition, reason, routed, debt) in enumerate([
            (1796256000000, "BLOCK", "concrete-behavior", True, 2),        # 2026-12-03
            (1796342400000, "ESCALATE", "test-aware-code", False, 2),     # 2026-12-04
            (1796860800000, "MERGE_OK", "all-gates-held", True, 3)]):     # 2026-12-10
        answer = {"patch_id": f"pr-{i}", "disposition": disposition, "rule": "route" if routed else "test-aware",
                  "reason": reason, "exit_code": 0, "decision_id": f"{ms:012x}"[:8] + "-" + f"{ms:012x}"[8:] + f"-7000-8000-00000000000{i}",
                  "steps": [{"step": "debt", "open": debt, "spent": 0, "counted": debt, "cap": 5, "over_cap": False,
                             "open_rows": [], "summary": "s"}]}
        if routed:
            answer["evidence"] = {"property_check": "pass", "fixture_check": "pass", "flaky_freeze": "pass"}
        kept.append(answer)
        with open(os.path.join(answers, f"{i}.json"), "w") as f:
            json.dump(answer, f, indent=2)
    with open(os.path.join(answers, "notes.md"), "w") as f:
        f.write("not an answer\n")
    want_review = post(url, "/review", "".join(json.dumps(a) + "\n" for a in kept).encode())
    driver.find_element(By.ID, "review-answers").send_keys(answers)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#charts section[data-kind=answers]") or None,
         "a directory of kept answers is drawn")
    weeks = [w for w in want_review["by_week"] if w["decisions"] > 0]
    want = [[w["week"], w["decisions"], w["escalation_rate"], w["inadmissible_share"]] for w in weeks]
    got = cells(driver, "chart-escalation")
    check(len(weeks) == 2 and len(got) == len(want)
          and all(same(c, v) for g, w in zip(got, want) for c, v in zip(g, w)),
          f"kept answers: the weeks are /review's, from the answers' ids ({got} vs {want})")
    debt = [[w["week"], w["freeze_debt"], w["debt_cap"]] for w in want_review["by_week"]]
    got = cells(driver, "chart-debt")
    check(len(got) == len(debt) and all(same(c, v) for g, w in zip(got, debt) for c, v in zip(g, w)),
          f"kept answers: the freeze debt per week is /review's ({got})")

    for name, said in [("notes.txt", "is not a decision log"), ("bad-ledger.jsonl", "line 2"),
                       ("huge.jsonl", "over the 64 MiB")]:
        started = time.monotonic()
        choose(driver, [files[name]])
        shown = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-status .problem") or None,
                     f"{name}: the page says what was wrong")
        check(said in shown[0].text, f"{name}: {shown[0].text!r}")
        check(time.monotonic() - started < 5, f"{name}: answered at once, the tab never hangs")
        check(not driver.find_elements(By.CSS_SELECTOR, "#charts section"), f"{name}: nothing is drawn")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="target/debug/patchgate")
    ap.add_argument("--out", default="target/page-test")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    open_server, url = serve(os.path.abspath(args.binary))
    locked_server, locked_url = serve(os.path.abspath(args.binary), TOKEN)
    driver = browser()
    try:
        driver.get(url + "/")
        check(driver.title == "patchgate", "the page loads")
        rows = wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#table tbody tr")) == 64 or None,
                    "the 64-row table renders from /route/table")
        check(rows, "64 rows")
        check(not driver.find_element(By.ID, "token-label").is_displayed(),
              "an open server's form asks for no token")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#gate-rules tbody tr")) == 13 or None,
             "the gate's 13 rules render from /gate/rules")
        cases = [
            (("pass", "pass", "pass"), "MERGE_OK", "all-held", "pass/pass/pass"),
            (("fail", "pass", "unknown"), "BLOCK", "fail-absorbs", "fail/pass/unknown"),
            (("pass", "pass", "(absent)"), "ESCALATE", "evidence-gap", "pass/pass/missing"),
        ]
        for i, (triple, disposition, rule, row_key) in enumerate(cases):
            decide(driver, triple)
            shown = driver.find_element(By.ID, "disposition").text
            check(shown == disposition, f"{triple}: the page shows {disposition} (it shows {shown})")
            fired = driver.find_element(By.ID, "rule").text
            check(rule in fired and "fired" in fired, f"{triple}: the rule shown is {rule} ({fired!r})")
            hits = driver.find_elements(By.CSS_SELECTOR, "#table tbody tr.hit")
            check(len(hits) == 1 and hits[0].get_attribute("data-key") == row_key,
                  f"{triple}: exactly the row {row_key} is highlighted")
            check(disposition in hits[0].text, f"{triple}: the highlighted row says {disposition}")
            driver.save_screenshot(os.path.join(args.out, f"page-{i + 1}-{disposition}.png"))
        logs = severe_logs(driver)
        check(not logs, f"no console errors or CSP violations ({logs})")

        review_checks(driver, url, args.out)
        logs = severe_logs(driver)
        check(not logs, f"no console errors or CSP violations in the review ({logs})")

        # A server that needs a token: the page and its tables stay open; deciding asks for it.
        driver.get(locked_url + "/")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#table tbody tr")) == 64 or None,
             "with auth on, the table still renders")
        decide(driver, ("pass", "pass", "pass"))
        label = driver.find_element(By.ID, "token-label")
        check(label.is_displayed(), "with auth on, the form asks for the token")
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.ID, "decide-button").click()
        wait(driver, lambda d: d.find_elements(By.ID, "disposition") or None, "a decision with the token")
        check(driver.find_element(By.ID, "disposition").text == "MERGE_OK", "with the token, the form decides")
        check(TOKEN not in driver.current_url, "the token is not in the URL")
        check(driver.execute_script("return window.localStorage.length + window.sessionStorage.length") == 0,
              "the token is not stored")
        logs = severe_logs(driver)
        check(not logs, f"no console errors or CSP violations with auth on ({logs})")
        driver.save_screenshot(os.path.join(args.out, "page-token.png"))
    finally:
        driver.quit()
        for p in (open_server, locked_server):
            p.terminate()
            p.wait(10)
    print("page test: all checks passed", flush=True)


if __name__ == "__main__":
    main()
