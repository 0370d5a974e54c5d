"""Runs docs/store.md's recipes ("Reading the store in DuckDB, Polars and pandas") as they
are written there and checks their figures against turnbench's JSON report.

Usage: store_recipes.py DOCS_MD REPORT_JSON, run in the folder holding turnbench.db (the
recipes name it so). Each block marked `<!-- recipe: NAME -->` on the page runs: `sql`
blocks in one DuckDB connection, `python` blocks in one namespace, in page order. Checked:
TTFT p50 (and its n) per cell from DuckDB, pandas, DuckDB over pandas and Polars within
1e-9 relative of the report's; attempted and completed conversations per cell exact;
conversation latency p50 per cell; every cell of the report present, none more; the
Parquet file's rows equal the view's. Offline: when the `duckdb-ext-sqlite` package is
installed, DuckDB loads its sqlite extension from there instead of downloading it.
Exits non-zero with what differed.
"""

import json
import math
import re
import sqlite3
import sys

import duckdb

REL = 1e-9
failures = []


def recipes(page):
    """[(name, language, code)] of the page's marked blocks, in order."""
    pattern = re.compile(r"<!-- recipe: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", re.S)
    return [(m.group(1), m.group(2), m.group(3)) for m in pattern.finditer(page)]


def connect():
    config = {}
    try:
        import duckdb_ext  # noqa: F401, the sqlite extension packaged for PyPI

        config = {
            "extension_directory": list(duckdb_ext.__path__)[0] + "/extensions",
            "autoinstall_known_extensions": False,
        }
    except ImportError:
        pass
    return duckdb.connect(config=config)


def close(what, got, want):
    ok = got is not None and want is not None and math.isclose(got, want, rel_tol=REL)
    if not ok:
        failures.append(f"{what}: recipe {got!r}, report {want!r}")


def equal(what, got, want):
    if got != want:
        failures.append(f"{what}: recipe {got!r}, report {want!r}")


def same_cells(what, got, report_cells):
    equal(f"{what}: cells", sorted(got), sorted(report_cells))


def main(docs, report_path):
    blocks = recipes(open(docs, encoding="utf-8").read())
    names = [b[0] for b in blocks]
    want = ["duckdb-attach", "duckdb-ttft", "duckdb-outcomes", "duckdb-parquet",
            "pandas", "duckdb-over-pandas", "polars"]
    if names != want:
        sys.exit(f"{docs}: recipe blocks {names}, expected {want}")
    report = json.load(open(report_path, encoding="utf-8"))
    cells = {(c["provider"], c["model"]): c for c in report["cells"]}
    if not cells:
        sys.exit(f"{report_path}: no cells")

    con = connect()
    ns = {}
    results = {}
    for name, lang, code in blocks:
        if lang == "sql":
            rel = con.sql(code)
            if rel is not None:
                cols = rel.columns
                results[name] = [dict(zip(cols, row)) for row in rel.fetchall()]
        elif lang == "python":
            exec(compile(code, f"{docs}:{name}", "exec"), ns)
        else:
            sys.exit(f"{docs}: recipe {name}: language {lang}")

    # DuckDB through the sqlite extension.
    ttft = {(r["provider"], r["label"]): r for r in results["duckdb-ttft"]}
    same_cells("duckdb-ttft", ttft, cells)
    for key, r in ttft.items():
        c = cells.get(key, {}).get("turns", {}).get("ttft", {})
        equal(f"duckdb-ttft {key} n", r["n"], c.get("n"))
        close(f"duckdb-ttft {key} p50", r["ttft_p50_ms"], (c.get("p50") or {}).get("value"))
    outcomes = {(r["provider"], r["label"]): r for r in results["duckdb-outcomes"]}
    same_cells("duckdb-outcomes", outcomes, cells)
    for key, r in outcomes.items():
        cell = cells.get(key, {})
        rel = cell.get("reliability", {})
        equal(f"duckdb-outcomes {key} attempted", r["attempted"], rel.get("attempted"))
        equal(f"duckdb-outcomes {key} completed", r["completed"], rel.get("completed"))
        lat = cell.get("conversation_latency", {})
        equal(f"duckdb-outcomes {key} latency n", r["latency_n"], lat.get("n"))
        close(f"duckdb-outcomes {key} latency p50", r["latency_p50_ms"],
              (lat.get("p50") or {}).get("value"))

    # pandas and DuckDB over pandas.
    p50 = ns["ttft_p50"]
    same_cells("pandas ttft_p50", list(p50.index), cells)
    for key, value in p50.items():
        close(f"pandas {key} p50", float(value), ttft.get(key, {}).get("ttft_p50_ms"))
    for key, r in ns["outcomes"].iterrows():
        rel = cells.get(key, {}).get("reliability", {})
        equal(f"pandas {key} attempted", int(r["attempted"]), rel.get("attempted"))
        equal(f"pandas {key} completed", int(r["completed"]), rel.get("completed"))
    over = {(r.provider, r.label): r.ttft_p50_ms for r in ns["ttft_p50_duckdb"].itertuples()}
    same_cells("duckdb-over-pandas", over, cells)
    for key, value in over.items():
        close(f"duckdb-over-pandas {key} p50", value, ttft.get(key, {}).get("ttft_p50_ms"))

    # Polars: the Parquet file, then the views through sqlite3.
    polars_p50 = {(r["provider"], r["label"]): r["ttft_p50_ms"]
                  for r in ns["ttft_p50_polars"].iter_rows(named=True)}
    same_cells("polars", polars_p50, cells)
    for key, value in polars_p50.items():
        close(f"polars {key} p50", value, ttft.get(key, {}).get("ttft_p50_ms"))
    db = sqlite3.connect("file:turnbench.db?mode=ro", uri=True)
    turn_rows = db.execute("SELECT COUNT(*) FROM turn_facts").fetchone()[0]
    conv_rows = db.execute("SELECT COUNT(*) FROM conversation_facts WHERE counts").fetchone()[0]
    completed_rows = db.execute(
        "SELECT COUNT(*) FROM turn_facts WHERE counts AND conversation_outcome = 'completed'"
    ).fetchone()[0]
    db.close()
    equal("turns.parquet rows (DuckDB)",
          con.sql("SELECT count(*) FROM 'turns.parquet'").fetchone()[0], turn_rows)
    equal("turns.parquet completed rows (Polars)", ns["completed_turns"].height, completed_rows)
    equal("polars read_database rows", ns["convs_polars"].height, conv_rows)

    if failures:
        sys.exit("recipes differ from the report:\n" + "\n".join(failures))
    print(f"recipes: {len(blocks)} blocks ran; {len(cells)} cells equal the report "
          f"(DuckDB, pandas, Polars); turns.parquet holds {turn_rows} turns")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: store_recipes.py DOCS_MD REPORT_JSON (in the folder of turnbench.db)")
    main(sys.argv[1], sys.argv[2])
