"""The one small interface every platform module implements, and the values it returns.

A platform turns a grader definition into the files that platform loads (``export``), says up front
whether it can (``can_export``: a kind it has no equivalent for is refused with the reason, never
written wrong), and, where the platform has a file format worth reading, finds and reads graders
back (``detect`` / ``import_``). Exports are pure: they read definitions and never execute anything.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from studio.core.errors import StudioError
from studio.core.kinds import Carry, GraderKind, UnknownKind, get_kind
from studio.core.models import GraderDefinition


class PlatformError(StudioError):
    """A file that is not this platform's format, or a grader it cannot express: one readable line."""


class Support(BaseModel):
    """Whether a platform can express a grader; ``reason`` says what is missing when it cannot."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    reason: str = ""

    @classmethod
    def yes(cls) -> Support:
        return cls(ok=True)

    @classmethod
    def no(cls, reason: str) -> Support:
        return cls(ok=False, reason=reason)


class ExportResult(BaseModel):
    """Files to write (relative path -> text) and what the target could not hold (``warnings``).

    An export with no warnings imports back equal to the original; each warning names one setting
    that was dropped or changed on the way.
    """

    model_config = ConfigDict(extra="forbid")

    files: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="what to do next; not losses")
    refused: dict[str, str] = Field(default_factory=dict, description="grader key -> why not exported")

    def merge(self, other: ExportResult) -> None:
        for path, text in other.files.items():
            if path in self.files and self.files[path] != text:
                raise PlatformError(f"two graders export to the same file {path!r}")
            self.files[path] = text
        self.warnings.extend(other.warnings)
        self.notes.extend(other.notes)
        self.refused.update(other.refused)


class Skipped(BaseModel):
    """One entry of an imported file that became no grader: where it is, what it was, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    where: str = Field(description="the entry's place in the file, e.g. 'tests[2] assert 1'")
    kind: str = Field(description="what the file calls it (the assertion type, the grader kind)")
    reason: str
    line: int | None = None

    def sentence(self) -> str:
        at = f" (line {self.line})" if self.line else ""
        return f"{self.where}{at}: {self.kind} not imported: {self.reason}"


class ImportResult(BaseModel):
    """Graders read from a file, and what did not come across: ``skipped`` entries (no grader was
    made: the import is partial) and ``warnings`` (a grader was made, but a field of the entry was
    not mapped or was changed). Nothing of the file is dropped without one of the two."""

    model_config = ConfigDict(extra="forbid")

    graders: list[GraderDefinition] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)

    @property
    def partial(self) -> bool:
        return bool(self.skipped)

    def report(self) -> list[str]:
        """Every loss, one sentence each: skipped entries first, then the unmapped fields."""
        return [s.sentence() for s in self.skipped] + list(self.warnings)


class Platform(ABC):
    """One target platform. Subclasses are stateless; the registry holds one instance of each."""

    #: short id used on the command line (``--to adaptive``)
    name: ClassVar[str]
    #: what people call it
    label: ClassVar[str]
    #: whether ``detect``/``import_`` are implemented
    imports: ClassVar[bool] = False

    def can_export(self, grader: GraderDefinition) -> Support:
        """What the grader's kind declares for this platform first (``Kind.platforms``: a kind that
        does not name the platform is refused by its name), then the platform's own checks of the
        definition (``_can_export``)."""
        try:
            kind = get_kind(grader.kind)
        except UnknownKind as exc:
            return Support.no(str(exc))
        carry = self.carry(kind)
        if not carry.exports:
            return Support.no(self.refusal(kind, carry))
        if problems := grader.problems():  # a stored definition from before a rule: not exported as is
            return Support.no(f"the definition is not valid: {'; '.join(problems)}")
        return self._can_export(grader)

    def carry(self, kind: GraderKind) -> Carry:
        """What this platform does with ``kind``, as the kind declares it (undeclared: refused)."""
        return kind.carried_by(self.name) or Carry("refused")

    def no_form(self, kind: GraderKind) -> str:
        """Why a kind that does not name this platform is refused; it says the kind's name."""
        return f"{self.label} has no {kind.kind.replace('_', ' ')} equivalent (kind {kind.kind!r})"

    def refusal(self, kind: GraderKind, carry: Carry) -> str:
        """The sentence for a refused kind: the kind's own reason for this platform, else its reason for
        every platform it does not name (``Kind.elsewhere``), else the platform's ``no_form``."""
        if carry.reason:
            return carry.reason
        return kind.elsewhere(self.label) if kind.elsewhere is not None else self.no_form(kind)

    @abstractmethod
    def _can_export(self, grader: GraderDefinition) -> Support:
        """The platform's checks of a definition whose kind it carries (contracts, options, models)."""

    @abstractmethod
    def _export(self, grader: GraderDefinition) -> ExportResult:
        """Export a grader ``can_export`` accepted."""

    def export(self, grader: GraderDefinition) -> ExportResult:
        support = self.can_export(grader)
        if not support.ok:
            raise PlatformError(f"{self.label} cannot express grader {grader.key!r}: {support.reason}")
        return self._export(grader)

    def export_many(self, graders: Sequence[GraderDefinition]) -> ExportResult:
        """Export what can be; the rest is listed in ``refused`` with its reason.

        The default writes each grader's own files side by side; platforms whose format gathers
        graders into one file (a Letta suite, a promptfoo config) override this.
        """
        result = ExportResult()
        for grader in graders:
            support = self.can_export(grader)
            if support.ok:
                result.merge(self._export(grader))
            else:
                result.refused[grader.key] = support.reason
        return result

    def detect(self, path: Path) -> bool:
        """True when the file looks like this platform's grader format (cheap, never raises)."""
        return False

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        """Read graders from ``path``; ``key`` names the grader when the file holds no key."""
        raise PlatformError(f"{self.label} has no grader file format to import from")
