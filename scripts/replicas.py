#!/usr/bin/env python3
"""Two patchgate replicas behind a local nginx, on loopback, bounded in time.

    python3 scripts/replicas.py [--binary target/release/patchgate] [--seconds 6]

Checks that both replicas give the same decisions (directly and through nginx), then runs
load through nginx and stops one replica with SIGTERM in the middle of it: no request may
fail, and the stopped replica exits 0. Needs nginx (Debian package) on PATH or in /usr/sbin.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fault import Load, ROOT, check, free_port, start  # noqa: E402

EVIDENCE = [
    {"property_check": p, "fixture_check": f, "flaky_freeze": z}
    for p in ("pass", "fail", "unknown") for f in ("pass", "fail") for z in ("pass", "unknown", "missing")
]


def decide(port, doc):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("POST", "/route", body=json.dumps(doc), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    body = json.loads(r.read())
    c.close()
    return r.status, body["disposition"], body["attribution"], body["rule"], body["exit_code"]


NGINX_CONF = """
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
daemon off;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  upstream patchgate {{
    server 127.0.0.1:{a} max_fails=1 fail_timeout=2s;
    server 127.0.0.1:{b} max_fails=1 fail_timeout=2s;
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://patchgate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # patchgate's decisions are pure, so a POST may be retried on the other replica when
      # the first one is going away (a refused connect, a closed keep-alive connection).
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_next_upstream_tries 2;
    }}
  }}
}}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "patchgate"))
    p.add_argument("--seconds", type=int, default=6)
    a = p.parse_args()
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        raise SystemExit("nginx is not installed (apt-get install nginx)")
    pa, pb, pn = free_port(), free_port(), free_port()
    ra = start(a.binary, pa, "--drain-delay", "2s")
    rb = start(a.binary, pb, "--drain-delay", "2s")
    tmp = tempfile.mkdtemp(prefix="patchgate-nginx-")
    with open(os.path.join(tmp, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(dir=tmp, a=pa, b=pb, port=pn))
    proxy = subprocess.Popen([nginx, "-c", os.path.join(tmp, "nginx.conf"), "-p", tmp],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while True:
            try:
                decide(pn, EVIDENCE[0])
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("nginx did not come up")
                time.sleep(0.1)
        same = all(decide(pa, d) == decide(pb, d) == decide(pn, d) for d in EVIDENCE)
        check(same, f"the same {len(EVIDENCE)} decisions from either replica and through nginx")

        load = Load(pn).run()
        time.sleep(a.seconds / 3)
        ra.send_signal(signal.SIGTERM)
        code = ra.wait(60)
        time.sleep(a.seconds / 3)
        load.join()
        print(f"     {load.ok} requests answered through nginx while one replica drained", flush=True)
        check(not load.failed, f"one replica stopped mid-load: zero failed requests ({load.failed[:3]})")
        check(load.ok > 50, "requests were served")
        check(code == 0, f"the stopped replica exited 0 (got {code})")
        check(decide(pn, EVIDENCE[0])[0] == 200, "the other replica still answers through nginx")
    finally:
        proxy.send_signal(signal.SIGQUIT)
        try:
            proxy.wait(10)
        except subprocess.TimeoutExpired:
            proxy.kill()
        for r in (ra, rb):
            if r.poll() is None:
                r.send_signal(signal.SIGTERM)
                r.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)
    print("replicas: all checks passed")


if __name__ == "__main__":
    main()
