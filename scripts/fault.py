#!/usr/bin/env python3
"""Fault and load run for patchgate, on loopback only, bounded in time and count.

    python3 scripts/fault.py [--binary target/release/patchgate] [--seconds 10]

1. sustained load on /route and /quorum from 8 keep-alive clients: zero errors, and resident
   memory flat (the last quarter's peak within 25% of the first quarter's);
2. SIGTERM in the middle of that load: every request the server accepted is answered, and
   the process exits 0;
3. a slowloris client is disconnected while other clients are served;
4. a flood of decisions past the concurrency limit is answered with 503s (never a crash or a
   stall); stalled /seal uploads hold only upload slots, so decisions go on meanwhile;
5. a client that disconnects mid-upload on /seal gives its slot back and leaves the server
   healthy.

Exits 1 on the first failed check. Needs only the Python standard library.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUTE = json.dumps({"patch_id": "load", "property_check": "fail", "fixture_check": "pass", "flaky_freeze": "unknown"})
SEAL = "1" * 64
QUORUM = json.dumps({
    "patch_id": "load", "changed_files": ["store/counters/mod.rs"],
    "catalog": {"properties": [{"id": "p", "strength": "strong", "locality": ["store/counters"]}]},
    "results": {"p": {"runs": [0, 0]}}, "ledger": [], "seal": {"actual": SEAL, "expected": SEAL},
})
EXPECTED = {"/route": 409, "/quorum": 200}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, port, *extra):
    proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        raise SystemExit(1)


class Load:
    """Keep-alive clients posting /route and /quorum until stopped or out of budget."""

    def __init__(self, port, clients=8, budget=200_000):
        self.port, self.clients, self.budget = port, clients, budget
        self.ok = 0
        self.failed = []
        self.closed_idle = 0
        self.refused = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def worker(self, i):
        path = "/route" if i % 2 == 0 else "/quorum"
        body = ROUTE if path == "/route" else QUORUM
        conn = None
        while not self.stop.is_set():
            with self.lock:
                if self.ok + len(self.failed) >= self.budget:
                    return
            if conn is None:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                    conn.connect()
                except OSError:
                    with self.lock:
                        self.refused += 1
                    return  # the server is gone: nothing more to send
            fresh = conn.sock is not None
            try:
                conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            except OSError:
                # The server closed this idle keep-alive connection: the request never went out.
                with self.lock:
                    self.closed_idle += 1
                conn.close()
                conn = None
                continue
            try:
                res = conn.getresponse()
                res.read()
            except http.client.RemoteDisconnected:
                # Closed before reading this request (an idle keep-alive closed while draining).
                with self.lock:
                    self.closed_idle += 1
                conn.close()
                conn = None
                continue
            except OSError as e:
                with self.lock:
                    self.failed.append(f"{path}: {e!r} (fresh={fresh})")
                conn.close()
                conn = None
                continue
            with self.lock:
                if res.status == EXPECTED[path]:
                    self.ok += 1
                else:
                    self.failed.append(f"{path}: status {res.status}")
            if res.getheader("connection", "").lower() == "close":
                conn.close()
                conn = None

    def run(self):
        self.threads = [threading.Thread(target=self.worker, args=(i,), daemon=True) for i in range(self.clients)]
        for t in self.threads:
            t.start()
        return self

    def join(self, timeout=60):
        self.stop.set()
        for t in self.threads:
            t.join(timeout)


def sustained(binary, seconds):
    port = free_port()
    proc = start(binary, port)
    load = Load(port).run()
    samples = []
    end = time.time() + seconds
    while time.time() < end:
        samples.append(rss_kib(proc.pid))
        time.sleep(0.25)
    load.join()
    quarter = max(1, len(samples) // 4)
    first, last = max(samples[:quarter]), max(samples[-quarter:])
    print(f"     {load.ok} requests in {seconds} s, RSS {first / 1024:.1f} MiB -> {last / 1024:.1f} MiB", flush=True)
    check(not load.failed, f"sustained load: zero errors ({load.failed[:3]})")
    check(load.ok > 100, "sustained load: requests were served")
    check(last <= first * 1.25 + 1024, "sustained load: memory flat")
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def sigterm_mid_load(binary):
    port = free_port()
    proc = start(binary, port)
    load = Load(port).run()
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    load.join()
    print(f"     {load.ok} answered, {load.closed_idle} idle connections closed by the drain, {load.refused} refused after it", flush=True)
    check(not load.failed, f"SIGTERM mid-load: zero failed requests ({load.failed[:3]})")
    check(code == 0, f"SIGTERM mid-load: exit 0 (got {code})")


def slowloris(binary):
    port = free_port()
    proc = start(binary, port, "--header-read-timeout", "1s")
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /route HTTP/1.1\r\nHost: x\r\n")
    started = time.time()
    served = 0
    cut = None
    while time.time() - started < 12:
        # Trickle one more header byte; never finish the head.
        try:
            s.sendall(b"X")
        except OSError:
            cut = time.time() - started
            break
        # Another client is served meanwhile.
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/route", body=ROUTE, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        served += r.status == 409
        c.close()
        # Has the server answered (408) or closed the slow connection?
        s.settimeout(0.3)
        try:
            s.recv(1024)
            cut = time.time() - started
            break
        except socket.timeout:
            pass
        except OSError:
            cut = time.time() - started
            break
    s.close()
    check(cut is not None and cut < 10, f"slowloris: the slow client was cut off (after {cut} s)")
    check(served > 0, f"slowloris: {served} other requests served meanwhile")
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def stall_upload(port):
    """An upload that stalls mid-member: a header announcing 900,000 bytes, then 100 of them.
    (Zero blocks would end the archive: an empty tree, answered at once.)"""
    member = tarfile.TarInfo("fixtures/big")
    member.size = 900_000
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /seal HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-tar\r\nContent-Length: 1000000\r\n\r\n"
              + member.tobuf(format=tarfile.GNU_FORMAT) + b"x" * 100)
    return s


def flood(binary):
    """Decisions past --max-concurrency are shed with 503 + Retry-After; stalled uploads hold
    only the /seal upload slots (never a decision's), and come back when their clients leave."""
    port = free_port()
    proc = start(binary, port, "--max-concurrency", "2", "--max-seal-uploads", "4")
    holders = [stall_upload(port) for _ in range(4)]
    time.sleep(0.5)
    # While the four uploads stall, decisions are still served...
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("POST", "/route", body=ROUTE, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    check(r.status == 409, "stalled uploads: decisions still served")
    # ...and a fifth upload is shed.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("POST", "/seal", body=b"\0" * 1024, headers={"Content-Type": "application/x-tar"})
    r = c.getresponse()
    r.read()
    check(r.status == 503 and r.getheader("retry-after") == "1", "stalled uploads: a fifth upload is shed with 503")
    # A flood of large decisions, 24 clients at once, past two decision slots.
    batch = ("[" + ",".join([ROUTE] * 10_000) + "]").encode()
    statuses = {}
    missing_retry_after = [0]
    lock = threading.Lock()
    started = time.time()

    def client():
        for _ in range(6):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/route/batch", body=batch, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            with lock:
                statuses[resp.status] = statuses.get(resp.status, 0) + 1
                if resp.status == 503 and resp.getheader("retry-after") != "1":
                    missing_retry_after[0] += 1
            conn.close()

    threads = [threading.Thread(target=client) for _ in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    took = time.time() - started
    print(f"     statuses during the flood: {statuses} in {took:.1f} s", flush=True)
    check(statuses.get(503, 0) > 0 and set(statuses) <= {503, 200}, "flood: shed with 503, nothing else")
    check(missing_retry_after[0] == 0, "flood: every 503 carries Retry-After")
    check(took < 60, "flood: no stall")
    check(proc.poll() is None, "flood: no crash")
    # Clients that disconnect mid-upload: the upload slots come back.
    for h in holders:
        h.close()
    deadline = time.time() + 10
    status = None
    while time.time() < deadline:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("POST", "/seal", body=bytes(1024), headers={"Content-Type": "application/x-tar"})
        status = c.getresponse().status
        c.close()
        if status == 200:
            break
        time.sleep(0.05)
    check(status == 200, "mid-upload disconnects: upload slots released, uploads resume")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/healthz")
    check(c.getresponse().status == 200, "mid-upload disconnects: healthy")
    proc.send_signal(signal.SIGTERM)
    check(proc.wait(30) == 0, "exit 0 after SIGTERM")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "patchgate"))
    p.add_argument("--seconds", type=int, default=10)
    a = p.parse_args()
    if not os.path.exists(a.binary):
        raise SystemExit(f"build it first: cargo build --release ({a.binary} is missing)")
    sustained(a.binary, a.seconds)
    sigterm_mid_load(a.binary)
    slowloris(a.binary)
    flood(a.binary)
    print("fault run: all checks passed")


if __name__ == "__main__":
    main()
