"""``run`` with a javascript grader: Node scores the demo dataset; without Node the run is refused
before it exists (exit 2), naming what is missing."""

from __future__ import annotations

from typing import Any

from platforms_env import needs_node


def test_javascript_run_scores_or_is_refused_without_node(cli: Any) -> None:
    needs_node()
    assert cli("demo").returncode == 0
    refused = cli("run", "qa-mentions-expected-js", "qa", env={"GRADER_STUDIO_NODE": ""})
    assert refused.returncode == 2 and "Node.js" in refused.stderr and "Traceback" not in refused.stderr
    assert "qa-mentions-expected-js" not in cli("runs", "list").stdout
    done = cli("run", "qa-mentions-expected-js", "qa")
    assert done.returncode == 0, done.stderr
    assert "ok 60" in done.stdout + done.stderr
