"""The grader-kind descriptor and the registry that finds every kind: what each kind declares about
itself, once, as ``KIND = Kind(...)`` in the module that implements it.

A kind's module is the only place that names it: its definition model (``model``), its scorer, its
icon and family, its editor body, and what each export target does with it (``platforms``). The
definition union (``studio.core.models.definition``), the menus, the library groups, the icons, the
judge renderer and scorer, align, and every platform's ``can_export`` read the descriptor from here.

Kinds are found in the studio's kind packages (``KIND_PACKAGES``) and in any package or module an
installed distribution names under the ``grader_studio.kinds`` entry-point group: a kind shipped
outside the studio registers through its own package metadata, and nothing in the studio changes.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Generic, Literal, ParamSpec, Protocol, TypeVar

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject

if TYPE_CHECKING:
    from studio.core.models import GraderBase

#: where the studio's own kind modules live: prompt judges, graders reached over HTTP, graders run here
KIND_PACKAGES = ("studio.core.judges.kinds", "studio.core.judges", "studio.core.graders")
#: the entry-point group naming further kind packages (or single kind modules)
ENTRY_POINT_GROUP = "grader_studio.kinds"

#: the families, in menu order: a kind is listed with its family, by ``rank`` inside it
FAMILIES = ("function", "judge", "endpoint", "rule", "combine")
Family = Literal["function", "judge", "endpoint", "rule", "combine"]

#: the glyph a kind gets when it declares none (Material Design Icons name, colour)
GENERIC_ICON = ("mdi6.file-document-outline", "#5b6170")


class UnknownKind(StudioError, ValueError):
    """A kind no module declares; the sentence suggests the nearest declared name."""


@dataclass(frozen=True)
class Carry:
    """What one export target does with a kind: writes it as the platform's own equivalent
    (``native``), writes something that scores close to it but not identically (``approximated``,
    ``reason`` says how it differs), or refuses it (``refused``, ``reason`` says why)."""

    how: Literal["native", "approximated", "refused"]
    reason: str = ""

    @property
    def exports(self) -> bool:
        return self.how != "refused"


NATIVE = Carry("native")


def approximated(reason: str) -> Carry:
    return Carry("approximated", reason)


def refused(reason: str) -> Carry:
    return Carry("refused", reason)


class GraderKind(Protocol):
    """What a grader kind declares about itself, once, in the module that implements it.

    ``KIND = Kind(...)`` in that module is all a new kind adds (and, for a judge, its designer body):
    the registry finds it, and the definition union, the engine, the judge renderer, the designer,
    the variable palette, the starters, the icons and the export targets read it.
    """

    # read-only properties: a kind is declared once (``Kind`` is a frozen dataclass)
    @property
    def kind(self) -> str: ...
    @property
    def label(self) -> str: ...
    #: the pydantic class a definition of this kind validates into
    @property
    def model(self) -> type[GraderBase]: ...
    #: "module:function" building the kind's scorer, imported only when a run needs it
    @property
    def scorer(self) -> str: ...
    #: the fields of a small working definition ("New grader" starts from it)
    @property
    def starter(self) -> JsonObject: ...
    #: the window's editor body: "function", "judge" (the designer body ``body`` names), "form" or "yaml"
    @property
    def editor(self) -> str: ...
    @property
    def family(self) -> Family: ...
    @property
    def rank(self) -> int: ...
    @property
    def icon(self) -> tuple[str, str]: ...
    @property
    def platforms(self) -> Mapping[str, Carry]: ...
    @property
    def body(self) -> str: ...
    @property
    def align(self) -> Literal["verdict", "score"] | None: ...
    @property
    def elsewhere(self) -> Callable[[str], str] | None: ...
    @property
    def cluster(self) -> bool: ...
    @property
    def sandboxed(self) -> bool: ...
    @property
    def label_scale(self) -> Callable[..., tuple[float, float]] | None: ...  # of the kind's model
    @property
    def calls_note(self) -> str: ...
    @property
    def pairs(self) -> bool: ...
    @property
    def lanes(self) -> frozenset[str]: ...
    @property
    def preview(self) -> Callable[..., object] | None: ...  # (the kind's model, a Sample) -> RenderedPrompt
    @property
    def render(self) -> Callable[..., object] | None: ...  # (the kind's model, a Sample) -> RenderedPrompt

    @property
    def is_judge(self) -> bool: ...
    @property
    def dry_runs(self) -> bool: ...
    @property
    def probed(self) -> bool: ...
    @property
    def score_bounds(self) -> tuple[float, float] | None: ...

    def carried_by(self, platform: str) -> Carry | None: ...


@dataclass(frozen=True)
class Kind:
    """The plain ``GraderKind``; judge kinds fill in the prompt parts.

    ``preview(grader, sample)`` renders the exact prompts without a model call; ``default_templates``
    maps a judge's variant (e.g. a pre-built metric) to the (system, user) templates used when a
    definition brings none; ``variables`` are the template variables the kind adds to the sample's;
    ``sample_variables`` says whether its templates also see those.

    ``platforms`` maps an export target's name (``adaptive``, ``hud``...) to what it does with the
    kind; a target the kind does not name refuses it, saying so by the kind's name. ``body`` is the
    "module:attribute" of a judge's designer body (the window imports it; the core never does); by
    default the module of ``studio.ui.editor.bodies`` named after the kind. ``align`` says what the
    human labels align teaches it from: "verdict" (PASS/FAIL labels become ``examples``) or "score"
    (scored labels become ``shots``); None: align refuses the kind.

    The facts the engine and the window used to hard-code as lists of kind names:

    ``cluster``: a Ray cluster's nodes may grade it (engine/executors/placement.py): it is bound by
    the CPU, calls no endpoint and needs no API key, which never leave this machine. A kind that
    combines others (``composite``) is placed by its parts.
    ``sandboxed``: it runs the grader's own (untrusted) code in the sandbox, so ``run`` refuses it
    without bubblewrap unless the user opts in, and says so when they do (cli/sandbox_notice.py).
    ``label_scale(definition)``: the scale the kind's normalised [0, 1] score maps back onto when
    human labels bring none (engine/agreement.py): a range judge's own ``score_range``.
    ``calls_note``: said by the dry run's estimate when the number of calls a sample makes depends on
    what the judge answers (a pre-built judge's claims), so the count is an assumption.
    ``counted``: a dry run counts its calls by running its own scorer with the dry-run context
    (its calls go through the judges' client, which records each one instead of sending it); None:
    every prompt judge, and nothing else (an OpenAI criterion that calls a model says True). A part
    that calls an endpoint and is not counted (a function grader's ``ctx`` helpers) is named in the
    estimate as not counted, never as free.
    ``pairs``: it grades two answers to one input, so the window offers it a dataset of pairs.
    ``probes``: bias probes measure it (engine/probes.py, the window's report card); None: every
    prompt judge is probed, and nothing else.
    ``render(grader, sample)``: the calls a kind that is no prompt judge makes, rendered without
    making them (a reward server's request; a composite's or a jury's parts', ``judges.render.render_parts``).
    ``lanes``: the ways the engine may hand its scorer the samples (``studio.core.scoring.LANES``):
    parsed samples always; a scorer declares which of the kind's lanes it takes for a definition
    (``Scorer.lanes``), and ``graders.registry.make_scorer`` refuses one that claims more.
    The scores a kind can give (``score_bounds``) are its model's ``SCORE_BOUNDS`` (models/common.py),
    since the store checks suite thresholds against them and sits below this module.
    """

    kind: str
    label: str
    model: type[GraderBase]
    scorer: str
    family: Family = "judge"
    rank: int = 100
    icon: tuple[str, str] = GENERIC_ICON
    starter: JsonObject = field(default_factory=dict)
    preview: Callable[..., object] | None = None
    default_templates: Callable[[str], tuple[str, str]] | None = None
    variables: tuple[tuple[str, str], ...] = ()
    sample_variables: bool = True
    editor: str = "yaml"
    platforms: Mapping[str, Carry] = field(default_factory=dict)
    body: str = ""
    align: Literal["verdict", "score"] | None = None
    elsewhere: Callable[[str], str] | None = None
    cluster: bool = False
    sandboxed: bool = False
    label_scale: Callable[..., tuple[float, float]] | None = None
    calls_note: str = ""
    pairs: bool = False
    render: Callable[..., object] | None = None
    probes: bool | None = None
    counted: bool | None = None
    lanes: frozenset[str] = frozenset({"samples"})

    def __post_init__(self) -> None:
        declared = self.model.model_fields.get("kind")
        if declared is None or declared.default != self.kind:
            raise TypeError(f"kind {self.kind!r}: its model {self.model.__name__} has kind {declared and declared.default!r}")
        if self.family not in FAMILIES:
            raise TypeError(f"kind {self.kind!r}: unknown family {self.family!r} (one of {', '.join(FAMILIES)})")
        if not self.body:
            object.__setattr__(self, "body", f"studio.ui.editor.bodies.{self.kind}:BODY")

    @property
    def is_judge(self) -> bool:
        """A prompt judge: it has prompts to preview (external endpoints and composites do not)."""
        return self.preview is not None

    @property
    def dry_runs(self) -> bool:
        """A dry run counts its calls (``counted``; by default every prompt judge)."""
        return self.is_judge if self.counted is None else self.counted

    @property
    def probed(self) -> bool:
        """Bias probes measure it: a prompt judge, or a kind that says so (a jury)."""
        return self.is_judge if self.probes is None else self.probes

    @property
    def score_bounds(self) -> tuple[float, float] | None:
        """The scores a grader of this kind gives (None: any finite number): its model's
        ``SCORE_BOUNDS``, the one place the store's suite checks read it too."""
        return self.model.SCORE_BOUNDS

    def carried_by(self, platform: str) -> Carry | None:
        """What export target ``platform`` does with this kind; None when the kind does not name it
        (the target then refuses it)."""
        return self.platforms.get(platform)


# ---- behaviour written per kind outside the kind's module -------------------------------------

R = TypeVar("R")
P = ParamSpec("P")


def kind_of(model: type[GraderBase]) -> str:
    """The kind name a definition model declares (its ``kind`` field's default)."""
    declared = model.model_fields.get("kind")
    if declared is None or not isinstance(declared.default, str):
        raise TypeError(f"{model.__name__} declares no kind")
    return declared.default


class ByKind(Generic[R]):
    """What a layer above the kinds does per kind (a platform's writer, a definition check, a
    window's panel): a table keyed by the kind's name, each row registered with the model classes it
    takes (``@table.on(BinaryJudge, RangeJudge)``). It replaces ``isinstance`` ladders over the
    models: a kind is found by its name, and a kind no row names is the caller's ``None`` (a new
    kind adds its own row, or the caller's default applies)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.rows: dict[str, Callable[..., R]] = {}

    def on(self, *models: type[GraderBase]) -> Callable[[Callable[P, R]], Callable[P, R]]:
        def register(fn: Callable[P, R]) -> Callable[P, R]:
            for model in models:
                name = kind_of(model)
                if name in self.rows and self.rows[name] is not fn:
                    raise TypeError(f"{self.what}: kind {name!r} has two rows")
                self.rows[name] = fn
            return fn
        return register

    def __contains__(self, kind: object) -> bool:
        return kind in self.rows

    def of(self, grader: GraderBase) -> Callable[..., R] | None:
        """The row for ``grader``'s kind, or None."""
        return self.rows.get(grader.kind)

    def kinds(self) -> list[str]:
        return list(self.rows)


# ---- the registry ------------------------------------------------------------------------------


def _entry_point_targets() -> list[str]:
    """The packages and modules installed distributions name under ``grader_studio.kinds`` (read
    only by the full scan: a run whose kinds are the studio's own does not pay for the metadata)."""
    import importlib.metadata

    return sorted({ep.value.split(":")[0].strip() for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)})


def _declared_in(module: ModuleType, found: dict[str, GraderKind], modules: dict[str, ModuleType]) -> None:
    kind = getattr(module, "KIND", None)
    if isinstance(kind, Kind):
        if kind.kind in found and modules[kind.kind].__name__ != module.__name__:
            raise TypeError(f"kind {kind.kind!r} is declared twice: in {modules[kind.kind].__name__} and {module.__name__}")
        found[kind.kind] = kind
        modules[kind.kind] = module


def _scan(name: str, found: dict[str, GraderKind], modules: dict[str, ModuleType]) -> None:
    """Every module of package ``name`` (or the module ``name`` itself) that declares a ``KIND``."""
    import pkgutil

    package = importlib.import_module(name)
    path = getattr(package, "__path__", None)
    if path is None:
        _declared_in(package, found, modules)
        return
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.ispkg or info.name.startswith("_") or info.name == "registry":
            continue
        _declared_in(importlib.import_module(f"{name}.{info.name}"), found, modules)


@cache
def _registry() -> tuple[dict[str, GraderKind], dict[str, ModuleType]]:
    found: dict[str, GraderKind] = {}
    modules: dict[str, ModuleType] = {}
    for name in (*KIND_PACKAGES, *_entry_point_targets()):
        _scan(name, found, modules)
    ordered = sorted(found.values(), key=lambda k: (FAMILIES.index(k.family), k.rank, k.kind))
    return {k.kind: k for k in ordered}, modules


def kinds() -> dict[str, GraderKind]:
    """Every grader kind by name, in menu order (family, then rank inside it)."""
    return _registry()[0]


def kind_module(kind: str) -> ModuleType:
    """The module that declares ``kind`` (a prompt judge's prompts, preview and ``score`` live there):
    the one named after it when it is, else from the full scan."""
    named = _named_module(kind) if isinstance(kind, str) else None
    if named is not None:
        return named
    get_kind(kind)
    return _registry()[1][kind]


@cache
def _named_module(kind: str) -> ModuleType | None:
    """The studio module named after ``kind`` that declares it, if one is (most are: ``function`` is
    ``studio.core.graders.function``): parsing or running a function grader then imports neither
    the judges nor the HTTP client, and a judge run none of the other kinds (their sandbox, their
    entry-point metadata), which ``kinds()`` would (0.2-0.8 s of a run's start-up)."""
    if not kind.isidentifier():
        return None
    for package_name in KIND_PACKAGES:
        name = f"{package_name}.{kind}"
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            module = importlib.import_module(name)
            declared = getattr(module, "KIND", None)
            if isinstance(declared, Kind) and declared.kind == kind:
                return module
    return None


def _named(kind: str) -> GraderKind | None:
    module = _named_module(kind)
    return None if module is None else module.KIND


def unknown_kind_message(kind: object) -> str:
    """``unknown kind 'binary_judg'; did you mean 'binary_judge'?`` (the nearest declared name)."""
    import difflib

    names = list(kinds())
    near = difflib.get_close_matches(str(kind), names, n=1) if isinstance(kind, str) else []
    if near:
        return f"unknown kind {kind!r}; did you mean {near[0]!r}?"
    return f"unknown kind {kind!r}; the kinds are {', '.join(names)}"


def get_kind(kind: str) -> GraderKind:
    """One kind's descriptor: from its own module when it is named after the kind, else from the
    full scan (``kinds()``)."""
    named = _named(kind) if isinstance(kind, str) else None
    if named is not None:
        return named
    try:
        return kinds()[kind]
    except (KeyError, TypeError):
        raise UnknownKind(unknown_kind_message(kind)) from None


def prompt_judge(kind: str) -> ModuleType:
    """One prompt judge's module (``KeyError`` when ``kind`` is not a prompt judge), found as
    ``get_kind`` finds it: a judge run imports its own kind, not every kind (``prompt_judges``)."""
    if not get_kind(kind).is_judge:
        raise KeyError(kind)
    return kind_module(kind)


def prompt_judges() -> dict[str, ModuleType]:
    """The prompt judges' modules by kind (those whose ``KIND`` has a preview)."""
    return {name: kind_module(name) for name, kind in kinds().items() if kind.is_judge}
