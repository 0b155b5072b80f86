"""One module per judge kind, named after it, each declaring ``KIND`` (see ``studio.core.kinds.Kind``).

A module here defines the kind's prompts, ``preview`` and how it reads the model's answer (``score``);
nothing else lists the judge kinds: ``prompt_judges`` (the registry's, ``studio.core.kinds``) finds
them here and in any package registered under the ``grader_studio.kinds`` entry point.
"""

from __future__ import annotations

from studio.core.kinds import prompt_judges

__all__ = ["prompt_judges"]
