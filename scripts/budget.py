#!/usr/bin/env python3
"""The resource budget of one hostile request, checked against a real server on loopback.

    python3 scripts/budget.py [--binary target/release/patchgate] [--json target/budget.json]

A fresh `patchgate serve` with its default settings is attacked the way a hostile client would,
one row at a time, while a second client polls `/healthz` every 100 ms. For every row it
asserts the budget the README states:

  - server CPU for the request (user + system, from /proc) <= 1.5 s,
  - peak resident memory (VmHWM, reset before each row) <= 256 MiB,
  - the reply <= 1 MiB, with the status the contract gives (4xx, never a 5xx),
  - /healthz never slower than 1 s meanwhile,

and then: slow uploads are cut while decisions are still served, a declared body over the
limit is refused at once, and after SIGTERM the process exits by its drain deadline however
much work is in flight. Finally a scaling run under callgrind: doubling an input at most
~2.2x the instructions spent on it (counted, not timed).

Loopback only; every loop is bounded in count and time. Standard library only (plus valgrind
for the scaling run, skipped with a note where it is missing). Exits 1 on the first failure.
"""
import argparse
import gzip
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_BUDGET_S = 1.5
RSS_BUDGET_KIB = 256 * 1024
REPLY_BUDGET = 1024 * 1024
HEALTH_BUDGET_S = 1.0
MIB = 1024 * 1024
TICKS = os.sysconf("SC_CLK_TCK")
results = []


def fail(msg):
    print(f"FAIL {msg}", flush=True)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, *extra):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{self.port}", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.05)
        else:
            self.proc.kill()
            fail("the server did not start")
        self.health = HealthPoller(self.port)

    def cpu_s(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def status(self, key):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return 0

    def reset_peak(self):
        # Linux resets VmHWM to the current RSS on "5" (needs the same user, or root).
        try:
            with open(f"/proc/{self.proc.pid}/clear_refs", "w") as f:
                f.write("5")
            return True
        except OSError:
            return False

    def stop(self):
        self.health.stop()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class HealthPoller:
    """GET /healthz every 100 ms on its own keep-alive connection; keeps the slowest answer."""

    def __init__(self, port):
        self.port = port
        self.worst = 0.0
        self.failures = 0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def reset(self):
        self.worst, self.failures = 0.0, 0

    def run(self):
        import http.client
        conn = None
        while self.running:
            started = time.time()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/healthz")
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    self.failures += 1
            except Exception:
                self.failures += 1
                conn = None
            self.worst = max(self.worst, time.time() - started)
            time.sleep(0.1)

    def stop(self):
        self.running = False
        self.thread.join(2)


def exchange(port, head, body_chunks, timeout=60):
    """Sends a request (head, then body chunks from an iterable, from a thread) and reads the
    response; stops sending once the response is complete. Returns (status, reply bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    done = threading.Event()

    def send():
        try:
            s.sendall(head)
            for chunk in body_chunks:
                if done.is_set():
                    return
                s.sendall(chunk)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    data = b""
    deadline = time.time() + timeout
    status, length = None, None
    try:
        while time.time() < deadline:
            part = s.recv(65536)
            if not part:
                break
            data += part
            if length is None and b"\r\n\r\n" in data:
                headers, _ = data.split(b"\r\n\r\n", 1)
                lines = headers.split(b"\r\n")
                status = int(lines[0].split()[1])
                for line in lines[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
            if length is not None and len(data.split(b"\r\n\r\n", 1)[1]) >= length:
                break
    except OSError:
        pass
    done.set()
    s.close()
    sender.join(5)
    if status is None:
        return None, b""
    return status, data.split(b"\r\n\r\n", 1)[1]


def post_head(path, content_type, length=None, extra=""):
    framing = f"Content-Length: {length}\r\n" if length is not None else "Transfer-Encoding: chunked\r\n"
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
            f"{framing}{extra}Connection: close\r\n\r\n").encode()


def chunked(chunks):
    for c in chunks:
        if c:
            yield b"%x\r\n" % len(c) + c + b"\r\n"
    yield b"0\r\n\r\n"


def pieces(body, size=256 * 1024):
    for i in range(0, len(body), size):
        yield body[i:i + size]


def row(server, name, path, content_type, body, expect, chunks=None, note=""):
    """One hostile request, measured against the budget."""
    server.health.reset()
    if not server.reset_peak():
        fail("cannot reset VmHWM (/proc/PID/clear_refs): run as the server's user or root")
    before = server.cpu_s()
    started = time.time()
    if chunks is None:
        status, reply = exchange(server.port, post_head(path, content_type, len(body)), pieces(body))
        sent = len(body)
    else:
        counter = {"n": 0}

        def counted():
            for c in chunks:
                counter["n"] += len(c)
                yield c
        status, reply = exchange(server.port, post_head(path, content_type), chunked(counted()))
        sent = counter["n"]
    took = time.time() - started
    time.sleep(0.3)  # let a blocking job that outlives its reply show in the CPU figure
    cpu = server.cpu_s() - before
    hwm = server.status("VmHWM")
    worst = server.health.worst
    r = {"attack": name, "endpoint": path, "sent_bytes": sent, "status": status,
         "reply_bytes": len(reply), "cpu_s": round(cpu, 3), "peak_rss_mib": round(hwm / 1024, 1),
         "healthz_worst_s": round(worst, 3), "seconds": round(took, 2)}
    results.append(r)
    print(f"  {name:<58} {path:<20} sent {sent / MIB:7.2f} MiB -> {status}  "
          f"cpu {cpu:5.2f} s  peak {hwm / 1024:6.1f} MiB  reply {len(reply):>7} B  "
          f"healthz worst {worst * 1000:4.0f} ms", flush=True)
    if status not in expect:
        fail(f"{name}: status {status}, expected {expect}: {reply[:300]!r}")
    if cpu > CPU_BUDGET_S:
        fail(f"{name}: {cpu:.2f} CPU-seconds > {CPU_BUDGET_S}")
    if hwm > RSS_BUDGET_KIB:
        fail(f"{name}: peak RSS {hwm / 1024:.0f} MiB > {RSS_BUDGET_KIB // 1024} MiB")
    if len(reply) > REPLY_BUDGET:
        fail(f"{name}: reply of {len(reply)} bytes > 1 MiB")
    if worst > HEALTH_BUDGET_S or server.health.failures:
        fail(f"{name}: /healthz took {worst:.2f} s (failures: {server.health.failures})")
    if status in (400, 413, 422) and not reply.startswith(b"{"):
        fail(f"{name}: the refusal is not a problem document: {reply[:200]!r}")
    return r


def compact(value):
    return json.dumps(value, separators=(",", ":")).encode()


def deep_path(size):
    return "a/" * (size // 2 - 1) + "a"


def tar_header(name, size, typeflag):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    if size < 8 ** 11:
        h[124:136] = b"%011o\0" % size
    else:  # GNU base-256 for sizes past the octal field
        h[124:136] = bytes([0x80]) + size.to_bytes(11, "big")
    h[136:148] = b"00000000000\0"
    h[156:157] = typeflag
    h[257:265] = b"ustar  \0"  # GNU magic
    h[148:156] = b"        "
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def gzip_stream(parts):
    """Gzips an iterable of byte strings, lazily."""
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    for p in parts:
        out = z.compress(p)
        if out:
            yield out
    yield z.flush()


def zeros(total, block=MIB):
    while total > 0:
        n = min(block, total)
        total -= n
        yield bytes(n)


def many_long_names(count, name_len):
    for i in range(count):
        name = (b"f/%08d/" % i) + b"n" * (name_len - 11)
        yield tar_header(b"././@LongLink", len(name) + 1, b"L")
        data = name + b"\0"
        yield data + bytes(-len(data) % 512)
        yield tar_header(b"x", 0, b"0")
    yield bytes(1024)


def attacks(binary):
    print("== one hostile request at a time, default settings", flush=True)
    server = Server(binary)
    try:
        j = "application/json"
        nd = "application/x-ndjson"
        # Deep paths: refused by the path cap (PATH_MAX) before any prefix work.
        for size in (256 * 1024, MIB, 4 * MIB - 200):
            doc = {"property_check": "pass", "fixture_check": "pass",
                   "changed_files": [deep_path(size)], "frozen_tests": [{"id": "t", "covers": ["a"]}]}
            row(server, f"one deep path ({size // 1024} KiB) in changed_files", "/route", j,
                compact(doc), {422})
        doc = {"changed_files": [deep_path(MIB)], "catalog": {"properties": []}, "results": {},
               "ledger": [], "seal": {"actual": "1" * 64, "expected": "1" * 64}}
        row(server, "one deep path (1024 KiB) in changed_files", "/quorum", j, compact(doc), {422})
        # Deep but legal paths, many of them: the linear matcher at work on a valid request.
        legal = "abc/" * 999 + "abc"  # 3,999 bytes, 1,000 segments: within both caps
        doc = {"property_check": "pass", "fixture_check": "pass",
               "changed_files": [legal + f"/{i}" for i in range(900)],
               "frozen_tests": [{"id": f"t{i}", "covers": [legal + f"/{i}x"]} for i in range(90)]}
        row(server, "900 paths at PATH_MAX against 90 deep prefixes (valid)", "/route", j,
            compact(doc), {200})
        # The patch gate: deep changed files against deep guarded prefixes and property sources
        # (one walk down each changed file), a valid request.
        doc = {"changed_files": [legal + f"/{i}" for i in range(600)],
               "guarded": [legal + f"/{i}x" for i in range(90)],
               "seal": {"actual": "1" * 64, "expected": "1" * 64},
               "catalog": {"properties": [{"id": f"p{i}", "strength": "strong", "locality": [legal + f"/{i}y"],
                                           "source": [legal + f"/{i}z"]} for i in range(90)]},
               "ledger": [{"test_id": f"t{i}", "covers": [legal + f"/{i}w"], "state": "closed"} for i in range(90)]}
        row(server, "600 paths at PATH_MAX vs 270 deep guards, sources, localities", "/gate", j,
            compact(doc), {424})
        n_gate = 4 * MIB // 2 - 64
        row(server, "4 MiB of invalid failed tests", "/gate", j,
            b'{"changed_files":[],"fixture_suite":{"exit_code":1,"failed_tests":[' + b"0," * n_gate + b"0]}}",
            {413, 422})
        # A forge's check runs: 60 MiB of them, mostly fields the router never reads (skipped
        # while reading, never held).
        sha = "ce587453ced02b1526dfb4cb910479d431683101"
        one = {"id": 0, "name": "matrix", "head_sha": sha, "status": "completed", "conclusion": "success",
               "html_url": "https://github.com/acme/shop/actions/runs/1/job/1",
               "output": {"title": "t", "summary": "s", "text": "x" * 2800},
               "app": {"id": 15368, "slug": "github-actions", "owner": {"login": "github", "id": 9919}}}
        n_runs = 60 * MIB // (len(compact(one)) + 8)
        runs = b",".join(compact(dict(one, id=i, name=f"matrix ({i})")) for i in range(n_runs))
        body = (b'{"head_sha":"' + sha.encode() + b'","gates":{"property_check":["p"],"fixture_check":["f"],'
                b'"flaky_freeze":["q"]},"check_runs":{"total_count":' + str(n_runs).encode()
                + b',"check_runs":[' + runs + b"]}}")
        row(server, f"{n_runs} check runs in 60 MiB (valid)", "/route/checks", j, body, {424})
        # 100,000 distinct checks in one gate, every one still running: linear, not quadratic.
        n_checks = 100_000
        names = [f"c{i}" for i in range(n_checks)]
        doc = {"head_sha": sha, "gates": {"property_check": ["p"], "fixture_check": names, "flaky_freeze": ["q"]},
               "check_runs": {"check_runs": [{"id": i, "name": n, "head_sha": sha, "status": "in_progress",
                                              "conclusion": None} for i, n in enumerate(names)]}}
        row(server, f"{n_checks} pending checks in one gate", "/route/checks", j, compact(doc), {425})
        # Unknown keys.
        keys = {}
        size = 2
        i = 0
        while size < 4 * MIB - 64:
            k = f"k{i}"
            keys[k] = 0
            size += len(k) + 5
            i += 1
        row(server, f"{len(keys)} distinct unknown keys", "/route", j, compact(keys), {422})
        # Rows endpoints.
        row(server, "64 MiB of `x\\n`", "/review", nd, b"x\n" * (32 * MIB), {422})
        # Lines the review skips: not objects, objects too short to be a decision, and objects
        # just long enough, each holding 48 values (read for their syntax, held nowhere).
        row(server, "64 MiB of `{\\n`", "/review", nd, b"{\n" * (32 * MIB), {422})
        row(server, "64 MiB of `{}\\n`", "/review", nd, b"{}\n" * (64 * MIB // 3), {422})
        line = b'{"a":[' + b"0," * 47 + b"0]}\n"
        row(server, "64 MiB of 104-byte objects of 48 numbers", "/review", nd, line * (64 * MIB // len(line)), {422})
        row(server, "1 MiB of `{}\\n` lines", "/ladder/report", nd, b"{}\n" * (MIB // 3), {422})
        row(server, "64 MiB of `{}\\n` lines", "/ladder/report", nd, b"{}\n" * (64 * MIB // 3), {422})
        row(server, "a JSON array of 64 MiB of `{}`", "/ladder/report", j,
            b"[" + b"{}," * (64 * MIB // 3 - 1) + b"{}]", {422})
        big = [{"patch": "p", "tier": "t1", "verdict": "pass", "seconds": 1.7e308}] * 3
        row(server, "seconds that add up past f64", "/ladder/report", j, compact(big), {422})
        # /seal bodies that are not archives.
        row(server, "a 64 MiB manifest of bad lines", "/seal", "text/plain", b"nope\n" * (64 * MIB // 5), {422})
        row(server, "a 64 MiB JSON file list of zeros", "/seal", j,
            b'{"files":[' + b"0," * (32 * MIB - 8) + b'0]}', {413, 422})
        # 4 MiB of invalid items.
        n = 4 * MIB // 2 - 32
        row(server, "4 MiB of invalid outcomes", "/freeze/eligibility", j,
            b'{"caught_seeded_bug":true,"outcomes":[' + b"0," * n + b"0]}", {413, 422})
        row(server, "4 MiB of invalid changed files", "/quorum", j,
            b'{"changed_files":[' + b"0," * n + b"0]}", {413, 422})
        row(server, "4 MiB of invalid changed files", "/ladder/plan", j,
            b'{"changed_files":[' + b"0," * n + b"0]}", {413, 422})
        row(server, "4 MiB of invalid base runs", "/admit", j,
            b'{"base_runs":[' + b"9," * (n * 2 // 3) + b'9]}', {413, 422})
        rec = {"seal": "1" * 64, "mutant": "m", "base_runs": [0, 0], "mutant_runs": [0, 0]}
        doc = {"changed_files": ["a"], "seal": {"actual": "1" * 64, "expected": "1" * 64},
               "require_admission": True,
               "catalog": {"properties": [{"id": f"p{i}", "strength": "strong", "locality": ["a"],
                                           "admitted": rec} for i in range(20000)]}}
        row(server, "20,000 catalog rows, each an admitted record that proves nothing", "/quorum", j,
            compact(doc), {422})
        row(server, "4 MiB of invalid frozen tests", "/route", j,
            b'{"changed_files":["a"],"frozen_tests":[' + b"0," * n + b"0]}", {413, 422})
        # Archives whose headers claim more than the caps: refused before the data is read.
        row(server, "gzip tar, one GNU long name claiming 1 GiB", "/seal", "application/gzip", None, {413},
            chunks=gzip_stream([tar_header(b"././@LongLink", 1 << 30, b"L"), *zeros(1 << 30)]))
        row(server, "gzip tar, one PAX header claiming 3.5 GiB", "/seal", "application/gzip", None, {413},
            chunks=gzip_stream([tar_header(b"PaxHeaders/x", 7 << 29, b"x"), *zeros(64 * MIB)]))
        row(server, "gzip tar, 250k files with 4,000-byte names", "/seal", "application/gzip", None, {413},
            chunks=gzip_stream(many_long_names(250_000, 4000)))
        # A legal archive at the cap's scale: many members, sealed.
        row(server, "gzip tar, 20k files with 1,000-byte names (valid)", "/seal", "application/gzip", None,
            {200}, chunks=gzip_stream(many_long_names(20_000, 1000)))
    finally:
        server.stop()


def unread_replies(binary):
    print("== 64 clients that never read their /review reply", flush=True)
    server = Server(binary)
    try:
        server.reset_peak()
        server.health.reset()
        before = server.cpu_s()
        body = b"x\n" * MIB
        socks = []
        for _ in range(64):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(post_head("/review", "application/x-ndjson", len(body)) + body)
            socks.append(s)
        time.sleep(3)
        hwm = server.status("VmHWM")
        cpu = server.cpu_s() - before
        print(f"  peak {hwm / 1024:.1f} MiB for all 64, cpu {cpu:.2f} s, healthz worst "
              f"{server.health.worst * 1000:.0f} ms", flush=True)
        results.append({"attack": "64 clients that never read their /review reply (64 x 2 MiB)",
                        "endpoint": "/review", "peak_rss_mib": round(hwm / 1024, 1), "cpu_s": round(cpu, 3),
                        "healthz_worst_s": round(server.health.worst, 3)})
        if hwm > RSS_BUDGET_KIB:
            fail(f"unread replies: peak RSS {hwm / 1024:.0f} MiB")
        if server.health.worst > HEALTH_BUDGET_S:
            fail("unread replies: /healthz too slow")
        for s in socks:
            s.close()
    finally:
        server.stop()


def many_large_bodies(binary, *extra, limit_mib=512):
    """The whole server's peak with every client sending its largest body at once: what the
    Kubernetes memory limit is derived from (see deploy/kubernetes/deployment.yaml)."""
    print(f"== 24 clients, each a 60 MiB valid ledger or a 4 MiB batch, all at once {' '.join(extra)}",
          flush=True)
    server = Server(binary, *extra)
    try:
        server.reset_peak()
        server.health.reset()
        line = compact({"patch": "p", "tier": "t1-properties", "verdict": "pass", "seconds": 1.5}) + b"\n"
        ledger = line * (60 * MIB // len(line))
        doc = compact({"patch_id": "p" * 200, "property_check": "pass", "fixture_check": "fail",
                       "flaky_freeze": "pass"})
        batch = b"[" + b",".join([doc] * 10_000) + b"]"
        statuses = {}
        lock = threading.Lock()

        def send(path, content_type, body):
            status, _ = exchange(server.port, post_head(path, content_type, len(body)), pieces(body))
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

        threads = [threading.Thread(target=send, args=("/ladder/report", "application/x-ndjson", ledger))
                   for _ in range(12)]
        threads += [threading.Thread(target=send, args=("/route/batch", "application/json", batch))
                    for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        hwm = server.status("VmHWM")
        print(f"  statuses {statuses}; peak {hwm / 1024:.1f} MiB for the whole server; healthz worst "
              f"{server.health.worst * 1000:.0f} ms", flush=True)
        results.append({"attack": f"24 clients at once: 12 x 60 MiB ledgers, 12 x 4 MiB batches {' '.join(extra)}",
                        "statuses": statuses, "peak_rss_mib": round(hwm / 1024, 1),
                        "healthz_worst_s": round(server.health.worst, 3)})
        if not set(statuses) <= {200, 503}:
            fail(f"many large bodies: statuses {statuses}")
        if hwm > limit_mib * 1024:
            fail(f"many large bodies: the server peaked at {hwm / 1024:.0f} MiB > {limit_mib} MiB")
        if server.health.worst > HEALTH_BUDGET_S:
            fail("many large bodies: /healthz too slow")
    finally:
        server.stop()


def slow_uploads(binary):
    print("== 8 /seal uploads trickling one byte every 5 s, --max-concurrency 8", flush=True)
    server = Server(binary, "--max-concurrency", "8")
    try:
        socks = []
        for _ in range(8):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            # Mid-member, so the archive cannot end early: a header announcing 900,000 bytes.
            s.sendall(post_head("/seal", "application/x-tar", 10 * MIB) + tar_header(b"fixtures/big", 900_000, b"0"))
            socks.append(s)
        time.sleep(0.5)
        served = 0
        import http.client
        for _ in range(20):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            c.request("POST", "/route", body=b'{"property_check":"pass","fixture_check":"pass","flaky_freeze":"pass"}',
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            served += r.status == 200
            c.close()
        # Keep trickling; the server cuts each upload within one 5 s rate window.
        cut = []
        started = time.time()
        for s in socks:
            s.settimeout(0.2)
        while len(cut) < len(socks) and time.time() - started < 15:
            for i, s in enumerate(socks):
                if i in cut:
                    continue
                try:
                    data = s.recv(4096)
                    if data is not None:
                        cut.append(i)
                        if data and not data.startswith(b"HTTP/1.1 408"):
                            fail(f"slow upload answered {data[:60]!r}")
                except socket.timeout:
                    try:
                        s.sendall(b"x")
                    except OSError:
                        cut.append(i)
                except OSError:
                    cut.append(i)
            time.sleep(1)
        took = time.time() - started + 0.5
        print(f"  /route served {served}/20 while the uploads held their slots; "
              f"all 8 uploads cut after {took:.1f} s", flush=True)
        results.append({"attack": "8 /seal uploads trickling one byte every 5 s (--max-concurrency 8)",
                        "endpoint": "/seal", "route_served": f"{served}/20", "uploads_cut_after_s": round(took, 1)})
        if served != 20:
            fail(f"slow uploads: /route served only {served}/20")
        if len(cut) < len(socks) or took > 12:
            fail(f"slow uploads: {len(cut)}/8 cut after {took:.1f} s")
        for s in socks:
            s.close()
    finally:
        server.stop()


def declared_too_long(binary):
    print("== a declared Content-Length over the limit, no body", flush=True)
    server = Server(binary)
    try:
        for path, extra in (("/route", ""), ("/route", "Expect: 100-continue\r\n"), ("/review", "")):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            started = time.time()
            s.sendall(post_head(path, "application/json", 100_000_000, extra))
            data = s.recv(4096)
            took = time.time() - started
            s.close()
            line = data.split(b"\r\n", 1)[0].decode()
            print(f"  {path} {extra.strip()}: {line} after {took * 1000:.0f} ms", flush=True)
            if not data.startswith(b"HTTP/1.1 413") or took > 1:
                fail(f"declared length: {data[:80]!r} after {took:.2f} s")
            results.append({"attack": f"Content-Length: 100000000 on {path}, no body {extra.strip()}".strip(),
                            "endpoint": path, "status": 413, "seconds": round(took, 3)})
    finally:
        server.stop()


def sigterm_mid_work(binary):
    print("== SIGTERM while large decisions compute (--drain-timeout 2s)", flush=True)
    server = Server(binary, "--drain-timeout", "2s")
    try:
        rows = "\n".join(json.dumps({"patch": f"p{i}", "tier": f"t{i % 4}", "verdict": "pass", "seconds": 1.5})
                         for i in range(400_000)).encode()
        threads = [threading.Thread(target=exchange, args=(server.port, post_head("/ladder/report",
                   "application/x-ndjson", len(rows)), pieces(rows)), daemon=True) for _ in range(6)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        started = time.time()
        server.proc.send_signal(signal.SIGTERM)
        try:
            code = server.proc.wait(10)
        except subprocess.TimeoutExpired:
            fail("SIGTERM: still running 10 s after the signal")
        took = time.time() - started
        print(f"  exited {code} after {took:.2f} s (drain timeout 2 s)", flush=True)
        results.append({"attack": "SIGTERM with 6 large decisions in flight (--drain-timeout 2s)",
                        "exit_code": code, "exited_after_s": round(took, 2)})
        if took > 2 + 1.5:
            fail(f"SIGTERM: exited after {took:.1f} s, past the 2 s drain deadline")
    finally:
        server.stop()


def callgrind_instructions(binary, path):
    out = tempfile.mktemp(prefix="callgrind.")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "route", "--json", path],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    total = 0
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    os.unlink(out)
    return total


def scaling(binary):
    print("== scaling (callgrind instructions; doubling an input costs at most ~2.2x)", flush=True)
    if shutil.which("valgrind") is None:
        print("  valgrind is not on this machine: skipped", flush=True)
        return
    legal = "ab/" * 900

    def scoped(n):
        return {"property_check": "pass", "fixture_check": "pass",
                "changed_files": [legal + f"{i}/x" for i in range(n)],
                "frozen_tests": [{"id": f"t{i}", "covers": [legal + f"{i}"]} for i in range(n)]}

    def unknown(n):
        return {f"key{i}": i for i in range(n)}

    def deep(n):
        return {"property_check": "pass", "fixture_check": "pass",
                "changed_files": ["a/" * (n - 1) + "a"], "frozen_tests": [{"id": "t", "covers": ["a"]}]}

    cases = (("deep prefixes against deep paths", scoped, 40),
             ("distinct unknown keys", unknown, 20_000),
             ("one path of n segments", deep, 250))
    with tempfile.TemporaryDirectory() as d:
        for name, make, n in cases:
            counts = []
            for k in (n, 2 * n, 4 * n):
                p = os.path.join(d, "doc.json")
                with open(p, "w") as f:
                    json.dump(make(k), f)
                counts.append(callgrind_instructions(binary, p))
            # The fixed cost of a process cancels out in the differences.
            ratio = (counts[2] - counts[1]) / max(1, counts[1] - counts[0])
            print(f"  {name:<36} n={n}: {counts[0]:,} / {counts[1]:,} / {counts[2]:,} instructions; "
                  f"doubling costs {ratio:.2f}x", flush=True)
            results.append({"scaling": name, "n": n, "instructions": counts, "doubling_ratio": round(ratio, 2)})
            if ratio > 2.2:
                fail(f"scaling: {name} is not linear ({ratio:.2f}x per doubling)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "patchgate"))
    p.add_argument("--json", help="write every figure to this file")
    p.add_argument("--skip-scaling", action="store_true")
    a = p.parse_args()
    if not os.path.exists(a.binary):
        raise SystemExit(f"build it first: cargo build --release ({a.binary} is missing)")
    attacks(a.binary)
    unread_replies(a.binary)
    many_large_bodies(a.binary)
    # The small-host setting the systemd unit and fly.toml use (256 MB machines).
    many_large_bodies(a.binary, "--max-body-bytes", str(96 * MIB), limit_mib=224)
    slow_uploads(a.binary)
    declared_too_long(a.binary)
    sigterm_mid_work(a.binary)
    if not a.skip_scaling:
        scaling(a.binary)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    print("budget run: all checks passed", flush=True)


if __name__ == "__main__":
    main()
