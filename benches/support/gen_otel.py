"""Writes N OpenTelemetry GenAI conversations (4 chat spans each, one OTLP/JSON batch a line,
each span repeating the history) for BENCHMARKS.md: python3 benches/support/gen_otel.py OUT.jsonl N"""
import json, random, sys
random.seed(7)
words = "the of cache model answer token latency request server memory pipeline query index table stream batch vector shard queue".split()
def text(n): return " ".join(random.choice(words) for _ in range(n))
def a(k, v):
    return {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
base = 1746100800000000000
with open(sys.argv[1], "w") as f:
    for c in range(int(sys.argv[2])):
        history = []
        t = base + c * 10**10
        for k in range(4):
            history.append({"role": "user", "parts": [{"type": "text", "content": text(18)}]})
            out = {"role": "assistant", "parts": [{"type": "text", "content": text(55)}], "finish_reason": "stop"}
            span = {"traceId": f"{c:032x}", "spanId": f"{k:016x}", "name": "chat m", "kind": 3,
                "startTimeUnixNano": str(t), "endTimeUnixNano": str(t + 900_000_000),
                "attributes": [a("gen_ai.operation.name", "chat"), a("gen_ai.provider.name", "openai"),
                    a("gen_ai.request.model", "gpt-4o-mini"), a("gen_ai.conversation.id", f"conv-{c}"),
                    a("gen_ai.input.messages", json.dumps(history)), a("gen_ai.output.messages", json.dumps([out])),
                    a("gen_ai.usage.input_tokens", 30 + 100 * k), a("gen_ai.usage.output_tokens", 70)],
                "status": {}}
            history.append({"role": "assistant", "parts": out["parts"]})
            t += 2 * 10**9
            f.write(json.dumps({"resourceSpans": [{"resource": {"attributes": [a("service.name", "bot")]},
                "scopeSpans": [{"scope": {"name": "openai_v2"}, "spans": [span]}]}]}) + "\n")
