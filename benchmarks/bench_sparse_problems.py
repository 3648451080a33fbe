"""The sparse network on sparse noisy problems: every rule under every link policy.

Issue 31's table. :func:`snowpy.experiments.noisy_sparse.run` draws three
problems of the kind SNoW was built for (a few features owned by each class among
many that carry no information, some labels flipped), trains every built-in rule
at its defaults (``Network(rule, epochs=10, seed=0)``) under each link policy, and
measures held-out accuracy (a third of the examples), the links kept, the share of
the full table they are, and the model file; scikit-learn's ``Perceptron``
(``max_iter=10, tol=None``) on the same split is the reference.

    python benchmarks/bench_sparse_problems.py

Writes ``benchmarks/results/sparse_problems.json`` and prints the table of
``docs/benchmarks.md``. Needs no corpus.
"""

from __future__ import annotations

import argparse
import json
import time

from common import ROOT, machine

from snowpy.experiments.noisy_sparse import POLICIES, RULES, run


def table(rows: list[dict]) -> str:
    """The markdown table: one line per shape and rule, one column per policy."""
    policies = list(dict.fromkeys(r["links"] for r in rows))
    head = ["| problem | rule | " + " | ".join(policies) + " |",
            "|---|---|" + "---|" * len(policies)]
    lines, shape = head, None
    for r in rows:
        if r["links"] != policies[0]:
            continue
        if r["shape"] != shape:
            shape = r["shape"]
            lines.append(f"| **{shape}** | scikit-learn Perceptron | "
                         f"{r['sklearn_perceptron']:.3f} |" + " |" * (len(policies) - 1))
        cells = []
        for policy in policies:
            cell = next(c for c in rows if c["shape"] == shape and c["rule"] == r["rule"]
                        and c["links"] == policy)
            share = cell["n_links"] / max(cell["full_links"], 1)
            cells.append(f"{cell['accuracy']:.3f} · {share:.1%} · {cell['model_kb']:,.0f} kB")
        lines.append(f"| | {r['rule']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", action="append", help="a rule (repeatable)")
    parser.add_argument("--links", action="append", help="a link policy (repeatable)")
    args = parser.parse_args()
    start = time.perf_counter()
    result = run(rules=tuple(args.rule or RULES), policies=tuple(args.links or POLICIES))
    out = ROOT / "benchmarks" / "results" / "sparse_problems.json"
    out.write_text(json.dumps({"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                               "seconds": round(time.perf_counter() - start, 1),
                               "results": result.rows}, indent=1))
    print(table(result.rows))


if __name__ == "__main__":
    main()
