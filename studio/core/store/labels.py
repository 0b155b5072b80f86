"""Human labels of a dataset's samples: the label repository.

Labels belong to a dataset's samples (by sample id), not to a run, so one label set serves every
grader version and every run on that dataset. A set has a key (``human`` by default). Each change
appends a version (the database refuses edits and deletes); the current label of a sample is its
newest version, and a version with neither verdict nor score clears it (the history stays).

``put_many`` is the one writer, and the one place that keeps a person's label from being replaced
unseen (issue 43): a write that would replace (or clear) the current label of someone else needs
``replace=True``, the consent the window asks for and the CLI's ``--replace`` gives; a write that says
which version it was shown (``expected``) is refused when the sample's label changed since. Either
refusal is a ``ReplaceRefused`` naming each sample, and nothing of the batch is written. A replaced
label is never lost: it stays in the history as the version before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Connection, Engine, func, insert, select, update

from studio.core.models.broken import BrokenRow, reason_of
from studio.core.models.labels import DEFAULT_KEY, Label, LabelInput
from studio.core.near_names import did_you_mean

from .authors import current_user
from .database import inserted_id, take_turns, utcnow
from .errors import Conflict, NotFound
from .tables import TableRow, datasets, label_sets, labels, samples


@dataclass(frozen=True)
class Refused:
    """One sample a write would have replaced without consent: the version stored now (None: never
    labelled) and, for a write that said what it was shown, that version's number (0: unlabelled)."""

    sample_id: str
    current: Label | None
    expected: int | None = None

    @property
    def changed(self) -> bool:
        """The label is no longer the one the writer was shown (someone changed it since)."""
        return self.expected is not None and self.expected != (self.current.version if self.current else 0)

    def describe(self) -> str:
        now = _describe(self.current)
        if self.changed:
            return f"{self.sample_id!r} (changed since v{self.expected} was shown: now {now})"
        return f"{self.sample_id!r} ({now})"


def _describe(label: Label | None) -> str:
    if label is None:
        return "unlabelled"
    return f"{label.labeler or 'an unnamed labeller'}'s {label.value}, v{label.version}"


class ReplaceRefused(Conflict):
    """A label write refused, all of it: it would replace another person's label without consent, or
    a label changed since the writer was shown it. ``refused`` names each sample."""

    exit_code = 2
    SHOWN = 5

    def __init__(self, dataset: str, key: str, refused: list[Refused]) -> None:
        self.dataset, self.key, self.refused = dataset, key, refused
        changed = [r for r in refused if r.changed]
        others = [r for r in refused if not r.changed]
        parts = []
        for group, what in ((others, "another person's label"), (changed, "a label changed since it was shown")):
            if group:
                named = ", ".join(r.describe() for r in group[:self.SHOWN])
                more = f" and {len(group) - self.SHOWN} more" if len(group) > self.SHOWN else ""
                parts.append(f"{len(group)} {'sample has' if len(group) == 1 else 'samples have'} {what} "
                             f"under {key!r} on {dataset}: {named}{more}")
        super().__init__("; ".join(parts) + ". Nothing was written: replacing a label needs consent "
                         "(the replaced version stays in the sample's history)")


class LabelSet(BaseModel):
    model_config = ConfigDict(defer_build=True)

    dataset: str
    key: str
    scale_min: float | None = None
    scale_max: float | None = None
    labelled: int = 0
    counts: dict[str, int] = Field(default_factory=dict)


class LabelRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    # --- sets -------------------------------------------------------------------------------------
    def _dataset_id(self, conn: Connection, dataset: str) -> int:
        row = conn.execute(select(datasets.c.id).where(datasets.c.name == dataset,
                                                       datasets.c.deleted_at.is_(None))).first()
        if row is None:
            live = conn.execute(select(datasets.c.name).where(datasets.c.deleted_at.is_(None))).scalars()
            raise NotFound(f"no dataset named {dataset!r}{did_you_mean(dataset, live)}")
        return int(row.id)

    def _set_id(self, conn: Connection, dataset: str, key: str, *, create: bool = False) -> int | None:
        dataset_id = self._dataset_id(conn, dataset)
        row = conn.execute(select(label_sets.c.id).where(label_sets.c.dataset_id == dataset_id,
                                                         label_sets.c.key == key)).first()
        if row is not None:
            return int(row.id)
        if not create:
            return None
        return inserted_id(conn.execute(insert(label_sets).values(
            dataset_id=dataset_id, key=key, created_at=utcnow())))

    def set_id(self, dataset: str, key: str = DEFAULT_KEY, *, create: bool = False) -> int | None:
        """The label set's row id (the results grid joins on it); None when it does not exist."""
        if create:
            with self._engine.begin() as conn:
                return self._set_id(conn, dataset, key, create=True)
        with self._engine.connect() as conn:
            return self._set_id(conn, dataset, key)

    def set_scale(self, dataset: str, key: str, low: float, high: float) -> None:
        if not high > low:
            raise Conflict(f"a scale needs its low end below its high end (got {low:g}-{high:g})")
        with self._engine.begin() as conn:
            set_id = self._set_id(conn, dataset, key, create=True)
            conn.execute(update(label_sets).where(label_sets.c.id == set_id).values(
                scale_min=low, scale_max=high))

    def keys(self, dataset: str) -> list[str]:
        with self._engine.connect() as conn:
            dataset_id = self._dataset_id(conn, dataset)
            return list(conn.execute(select(label_sets.c.key).where(
                label_sets.c.dataset_id == dataset_id).order_by(label_sets.c.key)).scalars())

    def info(self, dataset: str, key: str = DEFAULT_KEY) -> LabelSet:
        current = self.current(dataset, key)
        with self._engine.connect() as conn:
            set_id = self._set_id(conn, dataset, key)
            row = None if set_id is None else conn.execute(
                select(label_sets).where(label_sets.c.id == set_id)).first()
        counts: dict[str, int] = {}
        for label in current.values():
            name = label.verdict or "score"
            counts[name] = counts.get(name, 0) + 1
        return LabelSet(dataset=dataset, key=key, scale_min=row.scale_min if row else None,
                        scale_max=row.scale_max if row else None, labelled=len(current), counts=counts)

    # --- labels -----------------------------------------------------------------------------------
    def sample_ids(self, dataset: str) -> list[str]:
        with self._engine.connect() as conn:
            dataset_id = self._dataset_id(conn, dataset)
            return list(conn.execute(select(samples.c.sample_id).where(
                samples.c.dataset_id == dataset_id).order_by(samples.c.idx)).scalars())

    def put_many(self, dataset: str, items: Iterable[LabelInput], key: str = DEFAULT_KEY, *,
                 replace: bool = False, expected: Mapping[str, int] | None = None) -> int:
        """Append a version for each label in one transaction (all or nothing); an unchanged label
        adds no version. Returns how many versions were written.

        ``replace``: consent to replace (or clear) labels by someone other than the item's labeller;
        without it such a batch is refused. ``expected``: sample id -> the label version the writer
        was shown (0: unlabelled); a sample whose label has another version now is refused, consent or
        not (the consent was given for what was shown). Refusals raise ``ReplaceRefused``."""
        items = list(items)
        labeler = current_user()
        with self._engine.begin() as conn:
            take_turns(conn, f"labels {dataset} {key}")  # two reviewers labelling one set at once
            set_id = self._set_id(conn, dataset, key, create=True)
            known = set(conn.execute(select(samples.c.sample_id).where(
                samples.c.dataset_id == self._dataset_id(conn, dataset))).scalars())
            for item in items:
                if item.sample_id not in known:
                    raise NotFound(f"dataset {dataset!r} has no sample with id {item.sample_id!r}")
            broken: dict[str, tuple[int, BrokenRow]] = {}
            latest = self._latest(conn, set_id, broken)
            now = utcnow()
            rows = []
            refused: list[Refused] = []
            for item in items:
                previous = latest.get(item.sample_id)
                if previous is not None and (previous.verdict, previous.score, previous.note) == (
                        item.verdict, item.score, item.note):
                    continue
                if previous is None and item.sample_id not in broken and item.verdict is None and item.score is None:
                    continue  # clearing what was never labelled
                author = item.labeler or labeler
                seen = None if expected is None else expected.get(item.sample_id)
                # a label that does not validate counts as unlabelled, but its version is taken: the new one follows it
                shown = previous.version if previous else broken.get(item.sample_id, (0, None))[0]
                stale = seen is not None and seen != shown
                someone_elses = previous is not None and not previous.cleared and previous.labeler != author
                if stale or (someone_elses and not replace):
                    refused.append(Refused(item.sample_id, previous, seen))
                    continue
                version = shown + 1
                rows.append({"label_set_id": set_id, "sample_id": item.sample_id, "version": version,
                             "verdict": item.verdict, "score": item.score, "note": item.note,
                             "labeler": author, "created_at": now})
                latest[item.sample_id] = Label(**{**rows[-1], "created_at": now})
            if refused:
                raise ReplaceRefused(dataset, key, refused)
            if rows:
                conn.execute(insert(labels), rows)
        return len(rows)

    def put(self, dataset: str, item: LabelInput, key: str = DEFAULT_KEY, *, replace: bool = False,
            expected: int | None = None) -> Label | None:
        """One sample's label (``put_many``'s rules); ``expected`` is the version shown (0: unlabelled)."""
        self.put_many(dataset, [item], key, replace=replace,
                      expected=None if expected is None else {item.sample_id: expected})
        return self.current(dataset, key).get(item.sample_id)

    def _latest(self, conn: Connection, set_id: int | None,
                broken: dict[str, tuple[int, BrokenRow]] | None = None) -> dict[str, Label]:
        """Each sample's newest label; one that does not validate is left out (the sample reads as
        unlabelled) and, when ``broken`` is given, put there with its version."""
        if set_id is None:
            return {}
        newest = (select(labels.c.sample_id, func.max(labels.c.version).label("v"))
                  .where(labels.c.label_set_id == set_id).group_by(labels.c.sample_id).subquery())
        query = (select(labels).join(newest, (labels.c.sample_id == newest.c.sample_id)
                                     & (labels.c.version == newest.c.v))
                 .where(labels.c.label_set_id == set_id))
        latest: dict[str, Label] = {}
        for row in conn.execute(query):
            label = _label(row)
            if isinstance(label, Label):
                latest[row.sample_id] = label
            elif broken is not None:
                broken[row.sample_id] = (row.version, label)
        return latest

    def broken(self, dataset: str, key: str = DEFAULT_KEY) -> list[BrokenRow]:
        """The current labels that do not validate (a teammate's or a hand edit's verdict this studio
        does not know, a score that is no number): listings name them, the rest reads as usual."""
        with self._engine.connect() as conn:
            found: dict[str, tuple[int, BrokenRow]] = {}
            self._latest(conn, self._set_id(conn, dataset, key), found)
        return [row for _, row in found.values()]

    def current(self, dataset: str, key: str = DEFAULT_KEY) -> dict[str, Label]:
        """Each labelled sample's newest label (cleared ones left out), by sample id."""
        with self._engine.connect() as conn:
            set_id = self._set_id(conn, dataset, key)
            return {sid: label for sid, label in self._latest(conn, set_id).items() if not label.cleared}

    def history(self, dataset: str, sample_id: str, key: str = DEFAULT_KEY) -> list[Label]:
        """Every version of one sample's label, oldest first (those that validate)."""
        return [entry for entry in self.history_entries(dataset, sample_id, key) if isinstance(entry, Label)]

    def history_entries(self, dataset: str, sample_id: str, key: str = DEFAULT_KEY) -> list[Label | BrokenRow]:
        """Every version of one sample's label, oldest first; one that does not validate kept in its
        place as a BrokenRow."""
        with self._engine.connect() as conn:
            set_id = self._set_id(conn, dataset, key)
            if set_id is None:
                return []
            rows = conn.execute(select(labels).where(labels.c.label_set_id == set_id,
                                                     labels.c.sample_id == sample_id)
                                .order_by(labels.c.version)).all()
        return [_label(r) for r in rows]


def broken_version(row: BrokenRow) -> int:
    """The version of a broken label (its ident is ``sample vN``): the one a relabelling follows."""
    return int(row.ident.rsplit(" v", 1)[1])


def _label(row: TableRow) -> Label | BrokenRow:
    """A stored label validated on read; one that does not validate a BrokenRow naming it."""
    try:
        return Label(**{k: v for k, v in row._asdict().items() if k in Label.model_fields})
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return BrokenRow("label", f"{row.sample_id} v{row.version}", str(row.labeler or ""), reason_of(exc),
                         f"label sample {row.sample_id} again (the window's label bar, or `grader-studio labels"
                         " import --replace`): its new version replaces this one")
