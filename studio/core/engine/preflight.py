"""Configuration a run needs, checked before the run is recorded.

A run that can only fail (its judge names an endpoint the library does not have, or names none
while the library has several) is refused with the reason before ``start_run`` writes a row, so
``runs list`` never shows a "failed 0/N" run that never graded anything.
"""

from __future__ import annotations

from collections.abc import Iterator

from studio.core.models import GraderDefinition, JudgeBase
from studio.core.store import Library


def _needs_endpoint(definition: GraderDefinition) -> Iterator[str | None]:
    """The endpoint name each part of the grader asks for (None: "the library's only one")."""
    stack = [definition]
    while stack:
        grader = stack.pop()
        if grader.kind == "composite":
            stack.extend(c.grader for c in grader.components)  # type: ignore[union-attr]
        elif grader.kind == "jury":
            stack.extend(j.grader for j in grader.jurors)  # type: ignore[union-attr]
        elif isinstance(grader, JudgeBase):
            yield grader.endpoint
        elif grader.kind == "function" and getattr(grader, "model_access", False):
            yield getattr(grader, "endpoint", None)


def check_run_configuration(library: Library, definition: GraderDefinition, endpoint: str | None) -> None:
    """Raise the library's refusal (a sentence) when the run could not reach its judge endpoint."""
    wanted = list(_needs_endpoint(definition))
    if not wanted:
        return
    for name in wanted:
        library.endpoints.resolve(endpoint, name)  # NoEndpoint / EndpointNotFound: LibraryError sentences
