"""Writes N Langfuse traces (a SPAN and 4 GENERATION observations each, one observation a
line as API v1 objects, each generation repeating the history in `input`) for BENCHMARKS.md:
python3 benches/support/gen_langfuse.py OUT.jsonl N"""
import json, random, sys
from datetime import datetime, timedelta, timezone
random.seed(11)
words = "the of cache model answer token latency request server memory pipeline query index table stream batch vector shard queue".split()
def text(n): return " ".join(random.choice(words) for _ in range(n))
def iso(t): return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
base = datetime(2025, 5, 1, tzinfo=timezone.utc)
with open(sys.argv[1], "w") as f:
    for c in range(int(sys.argv[2])):
        t = base + timedelta(seconds=10 * c)
        trace = f"trace-{c}"
        f.write(json.dumps({"id": f"span-{c}", "traceId": trace, "type": "SPAN", "name": "handle",
                            "startTime": iso(t), "endTime": iso(t + timedelta(seconds=9)),
                            "input": {"path": "/chat"}, "output": None}) + "\n")
        history = [{"role": "system", "content": "Answer briefly."}]
        for k in range(4):
            history.append({"role": "user", "content": text(18)})
            out = {"role": "assistant", "content": text(55)}
            start = t + timedelta(seconds=2 * k)
            f.write(json.dumps({"id": f"gen-{c}-{k}", "traceId": trace, "type": "GENERATION",
                "name": "chat", "startTime": iso(start),
                "completionStartTime": iso(start + timedelta(milliseconds=300)),
                "endTime": iso(start + timedelta(milliseconds=900)), "model": "gpt-4o-mini",
                "input": history, "output": out,
                "usage": {"input": 30 + 100 * k, "output": 70, "total": 100 + 100 * k, "unit": "TOKENS"},
                "level": "DEFAULT", "statusMessage": None}) + "\n")
            history.append(out)
