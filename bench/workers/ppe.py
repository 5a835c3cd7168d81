"""The seed's original analyzer loop (shared/seeds/003): every input is
submitted to a concurrent.futures.ProcessPoolExecutor up front, with
max_workers=os.cpu_count() (host cores, blind to the cgroup CPU quota).

Inputs (job ids) come one per line on stdin; the job is burnlib.burn.
Each result is printed as soon as it completes (the original kept them in
a list until the end; printing early only helps this contender: a result
delivered before a BrokenProcessPool still counts as completed).
"""

import argparse
import concurrent.futures
import functools
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import burnlib  # noqa: E402

CPU_COUNT = os.cpu_count() or 4


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    burnlib.add_flags(p)
    a = p.parse_args()
    process = functools.partial(burnlib.burn, ms=a.ms, mib=a.mib, big_every=a.big_every, big_mib=a.big_mib)
    data = [line.strip() for line in sys.stdin if line.strip()]
    results = []
    with concurrent.futures.ProcessPoolExecutor(CPU_COUNT) as executor:
        futures = []
        for item in data:
            futures.append(executor.submit(process, item))
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            print(result, flush=True)
            results.append(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
