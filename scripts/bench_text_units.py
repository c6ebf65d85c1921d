"""Side by side: scirag.text_units as PL/Python over scirag_helpers.text (issue 16)
against the PL/pgSQL version it replaced (sql/functions/deep_text@v1.1.sql, created
as pg_temp.text_units_plpgsql for the run). Prints, over the chunk bodies of a
loaded database (and a synthetic long paragraph), how many bodies split differently
and the median time per call of each, and of window_text over each.

    .venv/bin/python scripts/bench_text_units.py "<dsn>" [--limit N]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]


def old_text_units_sql() -> str:
    src = (ROOT / "sql" / "functions" / "deep_text@v1.1.sql").read_text(encoding="utf-8")
    m = re.search(r"CREATE OR REPLACE FUNCTION scirag\.text_units\(.*?END \$\$;", src, re.S)
    return m.group(0).replace("scirag.text_units(", "pg_temp.text_units_plpgsql(", 1)


def timed(conn, sql, args, reps=3) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        conn.execute(sql, args).fetchall()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dsn")
    ap.add_argument("--limit", type=int, default=400)
    a = ap.parse_args()
    with psycopg.connect(a.dsn, autocommit=True) as conn:
        conn.execute(old_text_units_sql())
        bodies = [
            r[0]
            for r in conn.execute("SELECT body FROM scirag.chunks ORDER BY length(body) DESC, id LIMIT %s", (a.limit,))
        ]
        bodies.append("Corn grows well. " * 3000)
        new_q = "SELECT unit_no, para_no, s, e, words, is_heading FROM scirag.text_units(%s) ORDER BY unit_no"
        old_q = new_q.replace("scirag.text_units", "pg_temp.text_units_plpgsql")
        conn.execute(new_q, (bodies[0],)).fetchall()  # warm the PL/Python import
        differ, t_new, t_old, units = 0, [], [], 0
        for b in bodies:
            new = conn.execute(new_q, (b,)).fetchall()
            old = conn.execute(old_q, (b,)).fetchall()
            differ += new != old
            units += len(new)
            t_new.append(timed(conn, new_q, (b,)))
            t_old.append(timed(conn, old_q, (b,)))
        chars = sum(len(b) for b in bodies)
        print(f"bodies {len(bodies)}  characters {chars}  units {units}  bodies split differently {differ}")
        print(
            f"text_units median ms/call: python {1000 * statistics.median(t_new):.3f}  "
            f"plpgsql {1000 * statistics.median(t_old):.3f}"
        )
        print(f"text_units total ms: python {1000 * sum(t_new):.1f}  plpgsql {1000 * sum(t_old):.1f}")
        long_new, long_old = t_new[-1], t_old[-1]
        print(f"3000-sentence paragraph ms: python {1000 * long_new:.1f}  plpgsql {1000 * long_old:.1f}")


if __name__ == "__main__":
    main()
