#!/usr/bin/env python3
"""A serving-shaped workload for `benchbook run exec`: an HTTP server and an
open-loop load generator, as a vLLM benchmark is shaped, on a CPU.

The server (a child process, `ThreadingHTTPServer`) answers each request
after hashing a buffer (`--work-kib`, SHA-256 releases the GIL, so its
threads use every CPU the process may run on). The load generator sends
requests at fixed intervals, `--rates` requests per second, each for
`--seconds`, from a pool of threads, and records per request the time to
first byte (from when the request was due to be sent to the response's
status line) and when it finished.

Per rate it reports (protocol: scripts/benchbook_metrics.py):
  served_req_per_s  requests completed per second (higher is better)
  ttfb_p50_ms       median time to first byte (lower is better)
  ttfb_p99_ms       99th percentile time to first byte (lower is better)
each with the parameter `request_rate`, the offered rate.

Under `benchbook run exec --partitions N`, each instance serves 1/N of the
offered rate (BENCHBOOK_PARTITIONS), so the partitions' throughputs add up
to the same offered load as one instance on the whole machine.
"""

import argparse
import concurrent.futures as cf
import hashlib
import http.client
import http.server
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchbook_metrics import emit  # noqa: E402


def serve(work_kib):
    payload = os.urandom(work_kib * 1024)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = hashlib.sha256(payload + self.path.encode()).hexdigest().encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer.request_queue_size = 1024
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


def one_request(port, due, i):
    """Wait until the request is due, send it; (ttfb, finished) in seconds."""
    delay = due - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", f"/r{i}")
    resp = conn.getresponse()
    ttfb = time.perf_counter() - due
    resp.read()
    conn.close()
    return ttfb, time.perf_counter()


def load(port, rate, seconds, workers):
    n = max(1, int(rate * seconds))
    start = time.perf_counter() + 0.05
    dues = [start + i / rate for i in range(n)]
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda a: one_request(port, a[1], a[0]), enumerate(dues)))
    ttfb = sorted(r[0] for r in results)
    last = max(r[1] for r in results)
    served = n / (last - start)
    pick = lambda q: ttfb[min(len(ttfb) - 1, int(q * len(ttfb)))]  # noqa: E731
    return served, pick(0.5), pick(0.99)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="50,100,200,400", help="offered requests per second, comma-separated")
    ap.add_argument("--seconds", type=float, default=2.0, help="how long each rate is offered")
    ap.add_argument("--work-kib", type=int, default=1024, help="KiB hashed per request")
    ap.add_argument("--workers", type=int, default=64, help="load generator threads")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve:
        serve(a.work_kib)
        return
    share = int(os.environ.get("BENCHBOOK_PARTITIONS", "1"))
    server = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve", "--work-kib", str(a.work_kib)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(server.stdout.readline())
        load(port, 20, 0.5, a.workers)  # warm up
        for rate in [float(r) for r in a.rates.split(",")]:
            served, p50, p99 = load(port, rate / share, a.seconds, a.workers)
            params = {"request_rate": rate}
            emit("served_req_per_s", served, "req/s", params, "higher")
            emit("ttfb_p50_ms", p50 * 1e3, "ms", params, "lower")
            emit("ttfb_p99_ms", p99 * 1e3, "ms", params, "lower")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
