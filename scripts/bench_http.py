#!/usr/bin/env python3
"""HTTP benchmarks of patchgate against a bare axum handler, measured in the same run.

    python3 scripts/bench_http.py load          # wrk, 32 connections, alternating runs
    python3 scripts/bench_http.py instructions  # valgrind callgrind, user-space instructions per request
    python3 scripts/bench_http.py profile       # the same, split by layer (callgrind_annotate)

`load` reports medians of alternating runs (throughput, p99, peak RSS) and the ratios
patchgate / bare. Wall-clock figures on a shared 2-core machine swing by +-20% between
identical runs; `instructions` counts user-space instructions per request, which repeats to
within 1%: each server serves N1 and then N2 requests on one keep-alive connection under
callgrind, and the figure is (I(N2) - I(N1)) / (N2 - N1), so start-up and shutdown cancel out.

Loopback only; every run is bounded in time and count. Needs wrk and valgrind (Debian).
"""
import argparse
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
# The bearer token the patchgate server is started with (auth on, as a hosted server runs);
# the bare server is sent the same header and ignores it.
TOKEN = "bench-token-0123456789abcdef"
BODY = json.dumps({"patch_id": "pr-1841", "property_check": "fail",
                   "fixture_check": "pass", "flaky_freeze": "unknown"}, separators=(",", ":"))


# What `patchgate serve` sets for itself with mallopt(3) (src/cli/serve.rs): given to every
# server through the environment, so the bare handler runs with the same malloc as patchgate.
MALLOC_TUNING = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "131072"}


def server_env(name, auth, extra=None):
    env = dict(os.environ, **MALLOC_TUNING, **(extra or {}))
    env.pop("PATCHGATE_TOKEN", None)
    if auth and name == "patchgate":
        env["PATCHGATE_TOKEN"] = TOKEN
    return env


def servers(port):
    addr = f"127.0.0.1:{port}"
    return {
        "patchgate": [os.path.join(RELEASE, "patchgate"), "serve", "--listen", addr],
        "bare": [os.path.join(RELEASE, "examples", "bare"), addr],
        # The article's router behind FastAPI/uvicorn (pip install fastapi uvicorn).
        "fastapi": [sys.executable, "-m", "uvicorn", "--app-dir", os.path.join(ROOT, "scripts"),
                    "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                    "--no-access-log", "fastapi_router:app"],
    }


def cpu_seconds(pid):
    """User + system CPU time of a process and its threads so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def build():
    subprocess.run(["cargo", "build", "--release", "--bin", "patchgate", "--example", "bare"],
                   cwd=ROOT, check=True)


def wait_port(port, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not come up")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def parse_duration_ms(text):
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    if not m:
        return float("nan")
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000.0 if unit == "us" else value * 1000.0 if unit == "s" else value


def wrk_once(port, seconds, connections, auth):
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write('wrk.method = "POST"\n')
        lua.write('wrk.headers["Content-Type"] = "application/json"\n')
        if auth:
            lua.write(f'wrk.headers["Authorization"] = "Bearer {TOKEN}"\n')
        lua.write(f"wrk.body = {json.dumps(BODY)}\n")
        script = lua.name
    try:
        out = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script,
             f"http://127.0.0.1:{port}/route"],
            capture_output=True, text=True, check=True, timeout=seconds + 60).stdout
    finally:
        os.unlink(script)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    p99 = parse_duration_ms(re.search(r"99%\s+(\S+)", out).group(1))
    errors = re.search(r"Socket errors: (.*)", out)
    return rps, p99, (errors.group(1) if errors else None), total


def load(args):
    port = args.port
    order = ["patchgate", "bare"] + (["fastapi"] if args.fastapi else [])
    results = {name: {"rps": [], "p99": [], "rss": [], "cpu_us": []} for name in order}
    for run in range(args.runs):
        for name in (order if run % 2 == 0 else list(reversed(order))):
            cmd = servers(port)[name]
            with open(os.devnull, "w") as devnull:
                proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull,
                                        env=server_env(name, args.auth))
            try:
                wait_port(port)
                wrk_once(port, 2, args.connections, args.auth)  # warm-up
                cpu_before = cpu_seconds(proc.pid)
                rps, p99, errors, total = wrk_once(port, args.seconds, args.connections, args.auth)
                cpu_us = (cpu_seconds(proc.pid) - cpu_before) / total * 1e6
                rss = peak_rss_kib(proc.pid)
            finally:
                stop(proc)
            if errors:
                raise SystemExit(f"{name}: wrk reported socket errors: {errors}")
            results[name]["rps"].append(rps)
            results[name]["p99"].append(p99)
            results[name]["rss"].append(rss)
            results[name]["cpu_us"].append(cpu_us)
            print(f"run {run + 1} {name:9s} {rps:10.0f} req/s  p99 {p99:6.2f} ms  "
                  f"server CPU {cpu_us:6.1f} us/request  peak RSS {rss / 1024:5.1f} MiB", flush=True)
    med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in results.items()}
    pg, bare = med["patchgate"], med["bare"]
    print()
    print(f"medians of {args.runs} alternating runs, {args.connections} connections, {args.seconds}s each"
          f" (auth {'on' if args.auth else 'off'}):")
    print(f"  throughput  patchgate {pg['rps']:.0f} req/s, bare {bare['rps']:.0f} req/s, ratio {pg['rps'] / bare['rps']:.2f}x")
    print(f"  server CPU  patchgate {pg['cpu_us']:.1f} us/request, bare {bare['cpu_us']:.1f} us/request, ratio {pg['cpu_us'] / bare['cpu_us']:.2f}x")
    print(f"  p99         patchgate {pg['p99']:.2f} ms, bare {bare['p99']:.2f} ms, ratio {pg['p99'] / bare['p99']:.2f}x")
    print(f"  peak RSS    patchgate {pg['rss'] / 1024:.1f} MiB, bare {bare['rss'] / 1024:.1f} MiB")
    if "fastapi" in med:
        fa = med["fastapi"]
        print(f"  FastAPI     {fa['rps']:.0f} req/s, {fa['cpu_us']:.1f} us/request, p99 {fa['p99']:.2f} ms, "
              f"peak RSS {fa['rss'] / 1024:.1f} MiB: patchgate's throughput {pg['rps'] / fa['rps']:.1f}x, "
              f"its CPU per request 1/{fa['cpu_us'] / pg['cpu_us']:.1f}")


def send_requests(port, n, auth):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = f"Bearer {TOKEN}"
    for _ in range(n):
        conn.request("POST", "/route", body=BODY, headers=headers)
        res = conn.getresponse()
        res.read()
        if res.status >= 500 or res.status == 401 or res.getheader("connection", "").lower() == "close":
            raise SystemExit(f"unexpected answer {res.status}")
    conn.close()


def callgrind_run(name, n, port, auth, keep=False):
    """Runs the server under callgrind for `n` requests; the total instructions, and the
    output file when `keep` (the caller deletes it)."""
    out_file = tempfile.mktemp(prefix=f"callgrind.{name}.{n}.")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + servers(port)[name]
    # One worker thread for both servers: with one keep-alive connection there is nothing to
    # spread, and a second worker adds work-stealing noise to the count.
    env = server_env(name, auth, {"TOKIO_WORKER_THREADS": "1"})
    with open(os.devnull, "w") as devnull:
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull, env=env)
    try:
        wait_port(port, timeout=120)
        send_requests(port, n, auth)
    finally:
        stop(proc)
    total = None
    with open(out_file) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
    if total is None:
        raise SystemExit(f"no totals in the callgrind output of {name}")
    if not keep:
        os.unlink(out_file)
        out_file = None
    return total, out_file


def instructions(args):
    per_request = {}
    for name in ("patchgate", "bare"):
        small, _ = callgrind_run(name, args.n1, args.port, args.auth)
        large, _ = callgrind_run(name, args.n2, args.port, args.auth)
        per_request[name] = (large - small) / (args.n2 - args.n1)
        print(f"{name:9s} {per_request[name]:10.0f} instructions/request  "
              f"(I({args.n1})={small}, I({args.n2})={large})", flush=True)
    print(f"ratio patchgate / bare: {per_request['patchgate'] / per_request['bare']:.2f}x"
          f" (auth {'on' if args.auth else 'off'})")


# The layers of a `/route` request, each the inclusive cost of the function that does it, less
# the inclusive cost of the listed functions it calls that are rows of their own (none of them
# is inlined into its caller: each is called from one place per request). The rest is hyper,
# axum's routing and tokio, which the bare handler pays too.
LAYERS = [
    ("request id: accepted or a new UUIDv7", "patchgate::http::layers::request_id", []),
    ("auth: the bearer token", "patchgate::http::layers::authorized", []),
    ("body: limit, deadline, memory budget, concurrency permit, content type",
     "<patchgate::http::extract::JsonBytes as axum_core::extract::FromRequest<patchgate::http::AppState>>::from_request::{{closure}}", []),
    ("strict parse and validation of the evidence", "patchgate::core::evidence::parse_route_bytes", []),
    ("decision: the rules, a decision id (UUIDv7), the decision metric, the response",
     "patchgate::http::decide::respond",
     ["patchgate::core::evidence::parse_route_bytes", "patchgate::telemetry::log_decision_of",
      "patchgate::core::answer::RouteAnswer::to_json"]),
    ("decision log: the line formatted and handed to the writer thread",
     "patchgate::telemetry::log_decision_of", []),
    ("answer: JSON written by hand", "patchgate::core::answer::RouteAnswer::to_json", []),
    ("observe: latency and request metrics, security headers, request id echoed",
     "patchgate::http::layers::finish", []),
]
# A layer with no function of its own: the sum of the self costs of the functions named so,
# measured in the bare handler too (tokio's time driver runs in both).
TIMERS = ("timers: tokio's time driver and sleeps (the header-read deadline was one per request)",
          re.compile(r"tokio::runtime::time::|tokio::time::sleep|TokioSleep|TokioTimer|patchgate::http::watchdog"))


def annotate(path, inclusive):
    out = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}",
                          "--threshold=100", "--show-percs=no", path],
                         capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\?\?\?|\S+?):(.*?)(?: \[[^\]]*\])?$", line)
        if m:
            name = re.sub(r"'\d+$", "", m.group(2).strip())
            costs[name] = max(costs.get(name, 0), int(m.group(1).replace(",", "")))
    return costs


def profile(args):
    n = args.n2 - args.n1
    per_request = {}
    for name in ("patchgate", "bare"):
        small, f1 = callgrind_run(name, args.n1, args.port, args.auth, keep=True)
        large, f2 = callgrind_run(name, args.n2, args.port, args.auth, keep=True)
        try:
            per_request[name] = ((large - small) / n,
                                 [annotate(f1, True), annotate(f2, True)],
                                 [annotate(f1, False), annotate(f2, False)])
        finally:
            os.unlink(f1)
            os.unlink(f2)

    def inclusive(name, function):
        _, incl, _ = per_request[name]
        return (incl[1].get(function, 0) - incl[0].get(function, 0)) / n

    def own(name, pattern):
        _, _, own = per_request[name]
        return sum(own[1].get(k, 0) - own[0].get(k, 0) for k in own[1] if pattern.search(k)) / n

    total, bare = per_request["patchgate"][0], per_request["bare"][0]
    print("| layer | patchgate | bare handler |")
    print("|---|---:|---:|")
    listed = 0.0
    for label, function, minus in LAYERS:
        cost = inclusive("patchgate", function) - sum(inclusive("patchgate", f) for f in minus)
        listed += cost
        print(f"| {label} | {cost:,.0f} | |")
    timers = own("patchgate", TIMERS[1])
    listed += timers
    print(f"| {TIMERS[0]} | {timers:,.0f} | {own('bare', TIMERS[1]):,.0f} |")
    print(f"| hyper, axum routing, tokio and the rest (bare: all of it) | {total - listed:,.0f} | |")
    print(f"| **whole request** | **{total:,.0f}** | **{bare:,.0f}** |")
    print(f"| ratio (auth {'on' if args.auth else 'off'}) | **{total / bare:.2f}x** | 1.00x |")


def main():
    global RELEASE
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["load", "instructions", "profile"])
    p.add_argument("--port", type=int, default=18191)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--n1", type=int, default=1000)
    p.add_argument("--n2", type=int, default=3000)
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--fastapi", action="store_true",
                   help="also load the article's router behind FastAPI/uvicorn (pip install fastapi uvicorn)")
    p.add_argument("--no-auth", dest="auth", action="store_false",
                   help="start patchgate without a bearer token (auth is on by default)")
    p.add_argument("--release-dir", default=RELEASE,
                   help="where the built binaries are (another checkout's target/release, to compare)")
    args = p.parse_args()
    RELEASE = os.path.abspath(args.release_dir)
    if not args.no_build:
        build()
    {"load": load, "instructions": instructions, "profile": profile}[args.what](args)


if __name__ == "__main__":
    sys.exit(main())
