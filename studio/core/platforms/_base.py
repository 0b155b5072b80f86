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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from studio.core.errors import StudioError
from studio.core.kinds import Carry, GraderKind, UnknownKind, get_kind
from studio.core.models import GraderDefinition, dump_grader, parse_grader


class PlatformError(StudioError):
    """A file that is not this platform's format, or a grader it cannot express: one readable line."""


class KeyRefused(PlatformError):
    """``import --key`` that cannot name what the file holds (several graders, not a key): the
    command was asked for something the file does not allow, a usage error (exit 2)."""

    exit_code = 2


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

    def import_file(self, path: Path, key: str | None = None) -> ImportResult:
        """``import_``, and ``key`` (``import --key``) kept the same way on every platform: it is the
        key of the one grader the file holds, whether the file named it or not (a definition an
        export carried, an Inspect scorer, a HUD module included); a file of several entries is
        refused with a sentence rather than the key being given to one of them, or to none. The file
        is read as it is (``import_`` without the key), so the key changes nothing else: not a name
        derived from it, nor whether an exported adapter is recognised as the source it wraps."""
        result = with_key(self.import_(path), key, path)
        refuse_nul(result, path)
        return result


#: how a NUL is written in the files graders are imported from: itself, JSON's and YAML's and Python's escapes
_NUL_SPELLINGS = ("\x00", "\\u0000", "\\x00", "\\0")


def refuse_nul(result: ImportResult, path: Path) -> None:
    """Refuse a grader holding a NUL character (a name, a prompt, a source), with the line of the file
    it is written on: PostgreSQL's text holds none, so the library would refuse it on one database
    and not the other, after the graders before it were created."""
    from studio.core.datasets.csv_records import nul
    from studio.core.datasets.readers import holds_nul

    for grader in result.graders:
        if holds_nul(dump_grader(grader)):
            text = path.read_text(encoding="utf-8", errors="replace")
            found = [at for at in (text.find(s) for s in _NUL_SPELLINGS) if at >= 0]
            where = f"{path}:{text.count(chr(10), 0, min(found)) + 1}" if found else str(path)
            raise PlatformError(f"{where}: grader {grader.key!r} holds {nul('in its text')}")


def with_key(result: ImportResult, key: str | None, path: Path) -> ImportResult:
    """``result`` with its one grader keyed ``key`` (see ``Platform.import_file``)."""
    if key is None:
        return result
    entries = [g.key for g in result.graders] + [s.where for s in result.skipped]
    if len(entries) != 1:
        raise KeyRefused(f"the key {key!r} names one grader, but {path.name} holds {len(entries)} "
                            f"({', '.join(entries)}); import it without a key")
    if not result.graders or result.graders[0].key == key:
        return result
    try:
        grader = parse_grader({**dump_grader(result.graders[0]), "key": key})
    except ValidationError:
        raise KeyRefused(f"{key!r} is not a grader key (at most 128 lowercase letters, digits, '-', '_' and '.', "
                         "starting with a letter or digit)") from None
    return result.model_copy(update={"graders": [grader]})
