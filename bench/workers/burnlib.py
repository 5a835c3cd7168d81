"""The benchmark job, in Python: the same work as bench/workers/burn.

burn(job_id) touches `mib` MiB (every page written) and then spins until
this process has used `ms` milliseconds of CPU time (time.process_time(),
user + system) since the job started. Measuring CPU time rather than wall
time keeps the work per job identical however hard the job is throttled.
A job whose id is a multiple of `big_every` (when > 0) touches `big_mib`
MiB instead: the job an OOM killer should take.
"""

import argparse
import time


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ms", type=int, default=100, help="CPU time per job, ms")
    p.add_argument("--mib", type=int, default=40, help="memory touched per job, MiB")
    p.add_argument("--big-every", type=int, default=0,
                   help="if > 0, jobs whose id is a multiple of this touch --big-mib")
    p.add_argument("--big-mib", type=int, default=300, help="memory of a big job, MiB")


def burn(job_id: str, ms: int, mib: int, big_every: int, big_mib: int) -> str:
    """Run one job; returns "done ID". Raises ValueError on a bad id."""
    n = int(job_id.strip())
    start = time.process_time()
    size = big_mib if big_every > 0 and n % big_every == 0 else mib
    block = bytearray(size << 20)
    block[::4096] = b"\x01" * len(range(0, len(block), 4096))
    x = 88172645463325252
    budget = ms / 1000.0
    while time.process_time() - start < budget:
        for _ in range(2000):
            x = (x ^ (x << 13)) & 0xFFFFFFFFFFFFFFFF
            x ^= x >> 7
    del block
    return f"done {n}"
