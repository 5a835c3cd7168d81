#!/usr/bin/env python3
"""A ration worker: reads one JSON task per line on stdin, answers one JSON
line per task on stdout, and keeps its warm state between tasks.

    ration run --worker 'python3 worker.py' ::: a b c

Protocol (see docs/workers.md):
    in:  {"id": N, "input": "..."}
    out: {"id": N, "ok": true, "output": <any JSON>}
      or {"id": N, "ok": false, "error": "..."}
stdin closed means: exit now. Diagnostics go to stderr, never stdout.

The inputs this example understands (used by ration's own tests):
    "fail:MSG"     answer ok:false with error MSG
    "alloc:MIB"    allocate and touch MIB MiB, hold it HOLD ms (alloc:MIB:HOLD)
    "sleep:MS"     sleep MS milliseconds (sleep:MS:TAG too); answer the input
    "exit:CODE"    exit with CODE in the middle of the task
    "kill:SIG"     kill itself with signal number SIG
    "garbage"      write a line that is not the protocol
    "stderr:TEXT"  write TEXT to stderr
    anything else  answered with {"input": ..., "pid": ..., "tasks": ...}
"""
import json
import os
import sys
import time


def handle(inp, state):
    kind, _, arg = inp.partition(":")
    if kind == "fail":
        raise ValueError(arg)
    if kind == "alloc":
        mib, _, hold = arg.partition(":")
        block = bytearray(int(mib) << 20)
        for i in range(0, len(block), 4096):  # touch every page: make it resident
            block[i] = 1
        time.sleep(int(hold or 0) / 1000)
        del block
        return inp
    if kind == "sleep":
        time.sleep(int(arg.split(":")[0]) / 1000)
        return inp
    if kind == "exit":
        sys.stdout.flush()
        os._exit(int(arg))
    if kind == "kill":
        os.kill(os.getpid(), int(arg))
        time.sleep(10)
    if kind == "garbage":
        print("this is not JSON", flush=True)
        return None
    if kind == "stderr":
        print(arg, file=sys.stderr, flush=True)
        return inp
    return {"input": inp, "pid": os.getpid(), "tasks": state["tasks"]}


def main():
    state = {"tasks": 0}  # warm state: survives across tasks
    for line in sys.stdin:  # EOF (stdin closed by ration): leave the loop, exit 0
        task = json.loads(line)
        state["tasks"] += 1
        try:
            answer = {"id": task["id"], "ok": True, "output": handle(task["input"], state)}
        except Exception as e:  # a task's failure is an answer, not a crash
            answer = {"id": task["id"], "ok": False, "error": str(e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()  # one answer per line, at once


if __name__ == "__main__":
    main()
