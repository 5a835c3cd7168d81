"""A long-lived ration worker (`ration run --worker 'python3 worker.py'`).

Protocol (JSON lines): ration writes {"id": N, "input": "..."} per line on
stdin; the worker answers one line per request on stdout:
{"id": N, "ok": true, "output": "..."} or {"id": N, "ok": false, "error": "..."}.
The job is burnlib.burn (same flags as bench/workers/burn). The worker
exits 0 at end of input.
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import burnlib  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    burnlib.add_flags(p)
    a = p.parse_args()
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            print(f"worker.py: bad request line: {e}", file=sys.stderr)
            return 2
        rid = req.get("id")
        try:
            res = {"id": rid, "ok": True,
                   "output": burnlib.burn(str(req.get("input", "")), a.ms, a.mib, a.big_every, a.big_mib)}
        except Exception as e:  # a failed job is an answer, not a crash
            res = {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(res) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
