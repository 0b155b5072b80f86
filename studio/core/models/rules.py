"""Non-LLM graders other than Python functions: built-in comparisons, bash, external endpoints."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .common import LOCAL, GraderBase

BuiltinFunction = Literal[
    "exact_match",
    "contains",
    "contains_any",
    "contains_all",
    "regex_match",
    "ascii_printable_only",
    "numeric_match",
    "token_f1",
    "is_json",
    "starts_with",
    "ends_with",
    "regex_extract",
]


class BuiltinOptions(BaseModel):
    """Options of the built-in comparisons; each function reads the ones that apply to it.

    ``reference`` None means the sample's expected answer; ``values`` is the list for contains_any/all.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    reference: str | None = None
    # The reference read from this field of the dataset row (OpenAI's ``{{ item.<field> }}``) instead
    # of the sample's expected answer; a row without it has no ground truth.
    reference_field: str | None = None
    values: list[str] = Field(default_factory=list)
    case_sensitive: bool | None = None
    normalize: bool = False
    # None: the function's own rule (exact_match strips both sides as Letta and HUD do; the contains
    # family and starts_with compare the text as it is, as Letta, HUD and promptfoo do).
    strip: bool | None = None
    tolerance: float = 0.0
    negate: bool = False
    # Named difference from HUD (off by default): numeric_match reads ``1,000`` as 1000, not 1.
    thousands_separators: bool = False
    # Letta's rules (on by default): an empty submission scores 0.0 before comparing; so does an empty
    # reference for a function that compares with one (promptfoo's contains/starts-with/regex fail
    # on an empty value too). Off: empty text is compared like any other (HUD, OpenAI, promptfoo's
    # equals; e.g. HUD's contains("x", "") passes).
    empty_submission_zero: bool = True
    empty_reference_zero: bool = True
    # promptfoo's rule for contains/icontains/starts-with/regex: an empty (or missing) value is not a
    # score at all, the assertion fails the test with an error ("Invariant failed"). On: such a sample
    # is an error result, checked before empty_reference_zero. promptfoo imports set it.
    empty_reference_error: bool = False
    # Which regular-expression language regex_match reads: Python's re (Letta) or JavaScript's
    # (promptfoo: ``\d`` ASCII-only, ``$`` only at the very end ...). promptfoo imports set it.
    regex_dialect: Literal["python", "javascript"] = "python"
    # How a case-insensitive comparison folds case: str.lower (Letta, HUD, promptfoo) or
    # str.casefold (Inspect's includes: "Straße" contains "STRASSE").
    case_fold: Literal["lower", "casefold"] = "lower"
    # Inspect's match(): after stripping (and folding case) both sides lose whitespace and ASCII
    # punctuation at both ends before exact_match/starts_with/ends_with/contains compare them.
    trim_punctuation: bool = False
    # Inspect's match(numeric=True): when the reference (without currency signs, commas, * and _)
    # reads as a number, exact_match/starts_with/ends_with/contains compare numbers instead of text:
    # the whole submission, its first, its last or any number-word, read as Inspect reads numbers.
    numeric_reference: bool = False
    # Which rule ``normalize`` applies: HUD's (non-word characters to spaces, articles dropped) or
    # Inspect's exact()/f1() tokens (split on spaces and hyphens, punctuation kept in numbers, numbers
    # as floats; a reference without tokens never matches; f1 rounded to two decimals).
    normalization: Literal["hud", "inspect"] = "hud"
    # Words dropped after normalising (Inspect's f1(stop_words=...)); only with normalization=inspect.
    stop_words: list[str] = Field(default_factory=list)
    # regex_extract: the pattern searched in the submission; its capture groups (or the whole match)
    # are compared with the reference (Inspect's pattern()); match_all: every group must equal it.
    pattern: str | None = None
    match_all: bool = False


class BuiltinGrader(GraderBase):
    kind: Literal["builtin"] = "builtin"
    function: BuiltinFunction
    options: BuiltinOptions = Field(default_factory=BuiltinOptions)

    @property
    def strips(self) -> bool:
        """Whether both sides are stripped before comparing (``options.strip`` or the function's rule)."""
        if self.options.strip is not None:
            return self.options.strip
        return self.function == "exact_match"


class BashGrader(GraderBase):
    """HUD's BashGrader: ``bash -lc command``; exit 0 scores 1.0, anything else (or timeout) 0.0."""

    kind: Literal["bash"] = "bash"
    SCORE_BOUNDS: ClassVar[tuple[float, float] | None] = None  # any finite number
    command: str
    timeout_seconds: float = Field(default=600.0, gt=0)
    #: this machine's folder: never written into an export (``LOCAL``)
    cwd: str | None = Field(default=None, json_schema_extra=LOCAL)


class ExternalEndpoint(GraderBase):
    """Adaptive's reward-server protocol: POST /score, /batch_score, GET /info."""

    kind: Literal["external_endpoint"] = "external_endpoint"
    SCORE_BOUNDS: ClassVar[tuple[float, float] | None] = None  # any finite number
    url: str
    timeout_seconds: float = Field(default=30.0, gt=0)
    batch: bool = False
    #: the name of this machine's variable holding the key: never written into an export (``LOCAL``)
    api_key_env: str | None = Field(default=None, json_schema_extra=LOCAL)


