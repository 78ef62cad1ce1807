#!/usr/bin/env python3
"""The page for people (`GET /`) in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium loads it from a live `patchgate serve`, decides three
documents through the form (a go, a block, an escalation), checks the disposition, the rule
shown and the highlighted row of the 64-row table, and, against a server that needs a token,
that the form asks for it and then decides. No console errors, no CSP violations. Saves
screenshots under --out.

    sudo apt-get install chromium chromium-driver && python3 -m pip install selenium
    cargo build && python3 scripts/page_test.py --binary target/debug/patchgate --out target/page-test
"""

import argparse
import os
import socket
import subprocess
import sys
import time

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
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
            and not (e.get("source") == "network" and any(d in e["message"] for d in decided))]


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
