"""Writes N LMSYS-Chat-1M-shaped rows (1-3 turns each, seeded) for the import figure in
BENCHMARKS.md: python3 benches/support/gen_lmsys.py OUT.jsonl N"""
import json, random, sys
random.seed(7)
words = "the of cache model answer token latency request server memory pipeline query index table stream batch vector shard queue".split()
def text(n): return " ".join(random.choice(words) for _ in range(n))
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        turns = random.choice([1, 1, 2, 3])
        conv = []
        for _ in range(turns):
            conv.append({"content": text(18), "role": "user"})
            conv.append({"content": text(55), "role": "assistant"})
        f.write(json.dumps({"conversation_id": f"{i:032x}", "model": random.choice(["vicuna-13b", "koala-13b", "gpt-4"]),
            "conversation": conv, "turn": turns, "language": "English",
            "openai_moderation": [{"categories": {"harassment": False}, "flagged": False}] * turns, "redacted": False}) + "\n")
