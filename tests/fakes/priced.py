#!/usr/bin/env python3
"""A fake claude that bills: answers with claude's own result object (the recorded capture
tests/fixtures/captures/claude/success.stdout) carrying the cost it was told to report.

Environment knobs:
  PRICED_COST=USD        what every turn costs (default 0.10)
  PRICED_ARGV_DIR=D      write each turn's argv into D as <pid>.json
With ``--max-budget-usd B`` and a cost above B it ends as claude does: the error_max_budget_usd
result, the cost spent so far reported.
"""

import json
import os
import sys
from pathlib import Path

CAPTURE = Path(__file__).resolve().parents[1] / "fixtures" / "captures" / "claude" / \
    "success.stdout"


def main() -> None:
    if "--version" in sys.argv:
        print("2.1.197 (Claude Code)")
        return
    prompt = sys.stdin.read()
    d = os.environ.get("PRICED_ARGV_DIR")
    if d:
        Path(d, f"{os.getpid()}.json").write_text(json.dumps(sys.argv[1:]))
    cost = float(os.environ.get("PRICED_COST", "0.10"))
    result = json.loads(CAPTURE.read_text().strip().splitlines()[-1])
    result["total_cost_usd"] = cost
    for usage in result["modelUsage"].values():
        usage["costUSD"] = cost
    result["result"] = f"A position, {len(prompt)} characters of prompt read."
    if "--max-budget-usd" in sys.argv:
        budget = float(sys.argv[sys.argv.index("--max-budget-usd") + 1])
        if cost > budget:
            result.update(subtype="error_max_budget_usd", is_error=True,
                          errors=[f"Reached maximum budget (${budget})"])
            del result["result"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
