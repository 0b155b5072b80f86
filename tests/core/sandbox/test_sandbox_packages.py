"""The allowlist of packages a worker may see (sandbox/packages.py): the distributions named and their
dependencies, nothing else of site-packages; the list of OpenAI's image is the one docs/openai.md
names; only a worker whose settings name packages mounts any."""

from __future__ import annotations

import os
from pathlib import Path

from studio.core.models.openai_grader import PYTHON_IMAGE_PACKAGES
from studio.core.sandbox.packages import visible_entries
from studio.core.sandbox.settings import SandboxSettings

DOCS = Path(__file__).resolve().parents[3] / "docs" / "openai.md"


def names(distributions: tuple[str, ...]) -> set[str]:
    return {os.path.basename(p) for p in visible_entries(distributions)}


def test_the_image_packages_and_their_dependencies_are_visible_and_nothing_else() -> None:
    seen = names(PYTHON_IMAGE_PACKAGES)
    assert {"numpy", "scipy", "rapidfuzz", "nltk", "rouge_score", "pydantic", "pydantic_core", "yaml"} <= seen
    assert "absl" in seen  # rouge-score's own dependency comes along
    forbidden = {"studio", "sqlalchemy", "httpx", "keyring", "aiohttp", "alembic", "PySide6", "platformdirs"}
    assert not {n.split("-")[0] for n in seen} & forbidden, sorted(seen)
    assert names(("rapidfuzz",)) == {n for n in seen if n.startswith("rapidfuzz")}
    assert names(()) == set() and names(("no-such-distribution",)) == set()


def test_the_image_list_is_the_one_the_docs_name() -> None:
    paragraph = DOCS.read_text().split("**python**", 1)[1].split("**multi**", 1)[0]
    assert "PYTHON_IMAGE_PACKAGES" in paragraph
    assert all(name in paragraph for name in PYTHON_IMAGE_PACKAGES), PYTHON_IMAGE_PACKAGES


def test_only_a_worker_whose_settings_name_packages_gets_them_mounted() -> None:
    """A function grader's worker (default settings) mounts no package; a packages worker mounts
    each allowed entry read-only at /packages/NAME, in bubblewrap and in the namespaces script."""
    from studio.core.sandbox.launch import _bwrap_prefix, _namespaces_argv

    assert "/packages" not in " ".join(_bwrap_prefix(SandboxSettings()))
    assert _namespaces_argv(["true"], SandboxSettings())[-2] == ""  # the script's $6: no package
    entries = visible_entries(("rapidfuzz",))
    assert _namespaces_argv(["true"], SandboxSettings(), entries)[-2].split("\n") == list(entries)
    argv = _bwrap_prefix(SandboxSettings(packages=("rapidfuzz",)))
    binds = [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == "--ro-bind" and "/packages/" in argv[i + 2]]
    assert binds == [(p, f"/packages/{os.path.basename(p)}") for p in visible_entries(("rapidfuzz",))]
    assert binds and all("rapidfuzz" in target for _, target in binds)
