#!/usr/bin/env python3
"""What reading a fleet from a bucket costs against reading it from local disk.

The 10^4-run synthetic fleet (examples/synth_archive.rs) is uploaded to a
Garage bucket on loopback (scripts/object-store.sh) with `benchbook sync
--upload-from`; then `fleet check` and `site` are timed from the bucket
(through the node's mirror) and from the folder, in turns (bucket, folder,
bucket, folder, ...), and each pair gives one ratio bucket/folder: pairing
keeps the ratio meaningful while this noisy VM's speed drifts.

    cargo build --release --bin benchbook --example synth_archive
    scripts/bucket_scale_bench.py [--archive /tmp/synth] [--repeats 3]

Prints the upload time, the cold mirror's first read, each pair, and the
median ratio with its min-max.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env, ok=(0, 1)):
    t = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t
    if p.returncode not in ok:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", default="/tmp/synth")
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bb", default=os.path.join(ROOT, "target/release/benchbook"))
    ap.add_argument("--synth", default=os.path.join(ROOT, "target/release/examples/synth_archive"))
    ap.add_argument("--work", default="/tmp/bucket-scale")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.archive, "runs")):
        subprocess.run([a.synth, a.archive, str(a.runs), "1000", str(a.runs // 10)], check=True, cwd=ROOT)
    store = os.path.join(a.work, "s3")
    subprocess.run(["bash", "scripts/object-store.sh", "start", store], check=True, cwd=ROOT)
    env = dict(os.environ)
    for line in open(os.path.join(store, "env")):
        k, v = line.removeprefix("export ").strip().split("=", 1)
        env[k] = v
    env["BENCHBOOK_CACHE"] = os.path.join(a.work, "mirror")
    shutil.rmtree(env["BENCHBOOK_CACHE"], ignore_errors=True)
    url = f"s3://{env['BENCHBOOK_S3_BUCKET']}/synth"
    try:
        up = timed([a.bb, "-q", "--archive", url, "sync", "--upload-from", a.archive], env, ok=(0,))
        print(f"upload of {a.runs} runs (sync --upload-from): {up:.1f} s")
        # `sync` filled the node's mirror; a node that never read the bucket starts empty.
        fresh_env = dict(env, BENCHBOOK_CACHE=os.path.join(a.work, "mirror-cold"))
        shutil.rmtree(fresh_env["BENCHBOOK_CACHE"], ignore_errors=True)
        cold = timed([a.bb, "-q", "--archive", url, "list"], fresh_env, ok=(0,))
        print(f"first read into an empty mirror (list: every run fetched and checked): {cold:.1f} s")
        warm = timed([a.bb, "-q", "--archive", url, "list"], fresh_env, ok=(0,))
        local = timed([a.bb, "-q", "--archive", a.archive, "list"], env, ok=(0,))
        print(f"list again: bucket {warm:.2f} s (one listing, nothing fetched), folder {local:.2f} s")
        site_b, site_l = os.path.join(a.work, "site-bucket"), os.path.join(a.work, "site-local")
        tasks = {
            "fleet check synthetic": (
                [a.bb, "-q", "--archive", url, "fleet", "check", "synthetic", "--json"],
                [a.bb, "-q", "--archive", a.archive, "fleet", "check", "synthetic", "--json"],
                None,
            ),
            "site (first build)": (
                [a.bb, "-q", "--archive", url, "site", site_b],
                [a.bb, "-q", "--archive", a.archive, "site", site_l],
                (site_b, site_l),
            ),
        }
        for name, (bucket, local, fresh) in tasks.items():
            ratios, tb, tl = [], [], []
            for i in range(a.repeats):
                if fresh:
                    for d in fresh:
                        shutil.rmtree(d, ignore_errors=True)
                b = timed(bucket, env)
                l = timed(local, env)
                tb.append(b)
                tl.append(l)
                ratios.append(b / l)
                print(f"  {name} pair {i + 1}: bucket {b:.2f} s, folder {l:.2f} s, ratio {b / l:.2f}")
            print(
                f"{name}: bucket {statistics.median(tb):.2f} s, folder {statistics.median(tl):.2f} s, "
                f"ratio {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f}, {a.repeats} pairs)"
            )
    finally:
        subprocess.run(["bash", "scripts/object-store.sh", "stop", store], cwd=ROOT)


if __name__ == "__main__":
    main()
