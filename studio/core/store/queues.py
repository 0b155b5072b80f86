"""Review queues: a named set of a dataset's samples for a team to label, blind (issue 48).

A queue holds sample ids chosen by a rule (``engine/queues.py`` chooses them), the runs they come
from, who reviews (everyone, or named users), who settles (the leads) and how many labels each
sample wants. Each reviewer's labels are rows of their own, appended as versions (the database
refuses edits and deletes), so two reviewers labelling at once never write over each other and
one reviewer's correction keeps the version before.

Blindness lives here, in the one place every face reads through: ``item`` returns the judge's
verdicts and the other reviewers' labels only to a caller who has labelled the sample (or a lead);
until then those fields are None and ``revealed`` is False. The window and the CLI both call it.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Connection, Engine, Table, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from studio.core.json_types import JsonObject, JsonValue
from studio.core.near_names import did_you_mean

from .authors import current_user
from .database import inserted_id, take_turns, utcnow
from .errors import Conflict, NotFound
from .tables import (
    TableRow,
    datasets,
    queue_labels,
    queue_samples,
    queue_settlements,
    results,
    review_queues,
    runs,
)

Verdict = Literal["PASS", "FAIL", "NA"]
VERDICTS: tuple[str, ...] = ("PASS", "FAIL", "NA")


class NotAllowed(Conflict):
    """A reviewer not assigned to a queue, or a settlement by someone who is not its lead."""

    exit_code = 2


class Queue(BaseModel):
    model_config = ConfigDict(defer_build=True)

    id: int
    name: str
    dataset: str
    runs: list[int]
    rule: JsonObject
    labels_wanted: int
    #: the reviewers; empty: everyone who opens the library
    assignees: list[str]
    leads: list[str]
    derived: list[JsonObject] = Field(default_factory=list)
    size: int = 0
    created_at: datetime | None = None
    author: str = ""

    def reviews(self, user: str) -> bool:
        return not self.assignees or user in self.assignees or user in self.leads

    @property
    def who(self) -> str:
        return ", ".join(self.assignees) if self.assignees else "everyone"


class QueueLabel(BaseModel):
    model_config = ConfigDict(defer_build=True)

    sample_id: str
    reviewer: str
    version: int
    verdict: Verdict | None
    note: str = ""
    created_at: datetime | None = None


class JudgeSaid(BaseModel):
    """What one run of the queue said about a sample (hidden from a reviewer until they label)."""

    model_config = ConfigDict(defer_build=True)

    run_id: int
    status: str
    score: float | None
    rationale: str | None
    error: str | None
    details: JsonObject = Field(default_factory=dict)


class ReviewItem(BaseModel):
    """One sample as a reviewer sees it. ``judged``, ``others`` and ``settled`` are None until the
    reviewer has labelled it (``revealed``)."""

    model_config = ConfigDict(defer_build=True)

    queue: str
    sample_id: str
    position: int
    idx: int
    reviewer: str
    mine: QueueLabel | None
    revealed: bool
    judged: list[JudgeSaid] | None = None
    others: list[QueueLabel] | None = None
    settled: QueueLabel | None = None


class Progress(BaseModel):
    model_config = ConfigDict(defer_build=True)

    reviewer: str
    labelled: int
    total: int


def _loads(value: str | None, default: JsonValue) -> JsonValue:
    try:
        return json.loads(value) if value else default
    except ValueError:
        return default


def _object(value: str | None) -> JsonObject:
    parsed = _loads(value, {})
    return parsed if isinstance(parsed, dict) else {}


class QueueRepository:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    # --- queues -----------------------------------------------------------------------------------
    def create(self, name: str, dataset_id: int, run_ids: Sequence[int], rule: JsonObject,
               chosen: Sequence[tuple[str, str]], *, labels_wanted: int = 1,
               assignees: Sequence[str] = (), leads: Sequence[str] = ()) -> Queue:
        """A new queue of ``chosen`` (sample id, why it was chosen), in that order."""
        name = name.strip()
        if not name:
            raise Conflict("a queue needs a name")
        if labels_wanted < 1:
            raise Conflict(f"a queue wants at least 1 label per sample (got {labels_wanted})")
        if not chosen:
            raise Conflict(f"the rule {rule.get('rule', '?')!r} chose no sample: queue {name!r} was not created")
        author = current_user()
        with self._engine.begin() as conn:
            _lock(conn, "review queues")
            if conn.execute(select(review_queues.c.id).where(review_queues.c.name == name)).first():
                raise Conflict(f"a queue named {name!r} already exists: pick another name")
            queue_id = inserted_id(conn.execute(insert(review_queues).values(
                name=name, dataset_id=dataset_id, runs=json.dumps(list(run_ids)), rule=json.dumps(rule),
                labels_wanted=labels_wanted, assignees=json.dumps(sorted(set(assignees))),
                leads=json.dumps(sorted(set(leads) or {author})), derived="[]", created_at=utcnow(),
                author=author)))
            conn.execute(insert(queue_samples), [
                {"queue_id": queue_id, "sample_id": sid, "position": i, "reason": reason}
                for i, (sid, reason) in enumerate(chosen)])
        return self.get(name)

    def _row(self, conn: Connection, name: str) -> TableRow:
        row = conn.execute(select(review_queues, datasets.c.name.label("dataset"))
                           .join(datasets, datasets.c.id == review_queues.c.dataset_id)
                           .where(review_queues.c.name == name)).first()
        if row is None:
            names = conn.execute(select(review_queues.c.name)).scalars()
            raise NotFound(f"no review queue named {name!r}{did_you_mean(name, names)}")
        return row

    @staticmethod
    def _queue(conn: Connection, row: TableRow) -> Queue:
        size = conn.execute(select(func.count()).select_from(queue_samples)
                            .where(queue_samples.c.queue_id == row.id)).scalar() or 0
        return Queue(id=row.id, name=row.name, dataset=row.dataset, runs=_loads(row.runs, []),
                     rule=_loads(row.rule, {}), labels_wanted=row.labels_wanted,
                     assignees=_loads(row.assignees, []), leads=_loads(row.leads, []),
                     derived=_loads(row.derived, []), size=int(size), created_at=row.created_at,
                     author=row.author or "")

    def get(self, name: str) -> Queue:
        with self._engine.connect() as conn:
            return self._queue(conn, self._row(conn, name))

    def list(self) -> list[Queue]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(review_queues, datasets.c.name.label("dataset"))
                                .join(datasets, datasets.c.id == review_queues.c.dataset_id)
                                .order_by(review_queues.c.id)).all()
            return [self._queue(conn, row) for row in rows]

    def assign(self, name: str, users: Sequence[str], *, leads: bool = False, remove: bool = False) -> Queue:
        """Add (or ``remove``) reviewers, or leads with ``leads``. Assigning nobody is everyone."""
        users = [u.strip() for u in users if u.strip()]
        if not users:
            raise Conflict("name at least one user to assign")
        column = "leads" if leads else "assignees"
        with self._engine.begin() as conn:
            _lock(conn, f"queue {name}")
            row = self._row(conn, name)
            now = set(_loads(getattr(row, column), []))
            now = now - set(users) if remove else now | set(users)
            if leads and not now:
                raise Conflict(f"queue {name!r} needs at least one lead to settle its samples")
            conn.execute(update(review_queues).where(review_queues.c.id == row.id)
                         .values(**{column: json.dumps(sorted(now))}))
        return self.get(name)

    def require_lead(self, name: str, user: str | None = None) -> Queue:
        """The queue, for a lead: what shows every reviewer's labels at once (agreement, export)
        is a lead's view; a reviewer sees the others' labels sample by sample, once labelled."""
        user = user or current_user()
        queue = self.get(name)
        if user not in queue.leads:
            raise NotAllowed(f"only a lead of queue {name!r} ({', '.join(queue.leads)}) sees every reviewer's "
                             f"labels at once; a reviewer sees them sample by sample after labelling it")
        return queue

    def add_run(self, name: str, run_id: int) -> Queue:
        """Another run of the queue's dataset (a new judge version re-run on it) joins the queue."""
        with self._engine.begin() as conn:
            _lock(conn, f"queue {name}")
            row = self._row(conn, name)
            run = conn.execute(select(runs.c.dataset_id).where(runs.c.id == run_id)).first()
            if run is None:
                raise NotFound(f"no run {run_id}")
            if run.dataset_id != row.dataset_id:
                raise Conflict(f"run {run_id} is on another dataset than queue {name!r} ({row.dataset})")
            ids = _loads(row.runs, [])
            if run_id not in ids:
                conn.execute(update(review_queues).where(review_queues.c.id == row.id)
                             .values(runs=json.dumps([*ids, run_id])))
        return self.get(name)

    def record_derived(self, name: str, entry: JsonObject) -> None:
        """What was made from the queue (a judge version's few-shots, a curated dataset)."""
        with self._engine.begin() as conn:
            _lock(conn, f"queue {name}")
            row = self._row(conn, name)
            conn.execute(update(review_queues).where(review_queues.c.id == row.id)
                         .values(derived=json.dumps([*_loads(row.derived, []), entry])))

    def samples(self, name: str) -> builtins.list[tuple[str, str]]:
        """The queue's (sample id, reason), in queue order."""
        with self._engine.connect() as conn:
            queue_id = self._row(conn, name).id
            return [(r.sample_id, r.reason) for r in conn.execute(
                select(queue_samples.c.sample_id, queue_samples.c.reason)
                .where(queue_samples.c.queue_id == queue_id).order_by(queue_samples.c.position))]

    # --- labels -----------------------------------------------------------------------------------
    def put_label(self, name: str, sample_id: str, verdict: str | None, note: str = "", *,
                  reviewer: str | None = None) -> QueueLabel | None:
        """The reviewer's label of one sample (a new version; None clears it). A reviewer not
        assigned to the queue is refused. Returns the label now current."""
        reviewer = reviewer or current_user()
        _check_verdict(verdict)
        queue = self.get(name)
        if not queue.reviews(reviewer):
            raise NotAllowed(f"{reviewer} is not a reviewer of queue {name!r} (assigned: {queue.who}); "
                             f"a lead can add them with `grader-studio queues assign {name} {reviewer}`")
        self._append(queue_labels, "reviewer", queue, sample_id, reviewer, verdict, note)
        return self.labels(name).get(sample_id, {}).get(reviewer)

    def settle(self, name: str, sample_id: str, verdict: str | None, note: str = "", *,
               author: str | None = None) -> QueueLabel | None:
        """A lead's settlement of one sample (None withdraws it); the judge's verdict and every
        reviewer's label stay as they were."""
        author = author or current_user()
        _check_verdict(verdict)
        queue = self.get(name)
        if author not in queue.leads:
            raise NotAllowed(f"only a lead of queue {name!r} ({', '.join(queue.leads)}) settles its samples; "
                             f"a lead can add one with `grader-studio queues assign {name} {author} --lead`")
        self._append(queue_settlements, "author", queue, sample_id, author, verdict, note)
        return self.settlements(name).get(sample_id)

    def _append(self, table: Table, who: str, queue: Queue, sample_id: str, person: str,
                verdict: str | None, note: str) -> None:
        for attempt in range(5):  # a writer that lost the race for a version number tries the next
            try:
                with self._engine.begin() as conn:
                    _lock(conn, f"{table.name} {queue.id} {sample_id}")
                    if conn.execute(select(queue_samples.c.sample_id).where(
                            queue_samples.c.queue_id == queue.id, queue_samples.c.sample_id == sample_id)).first() is None:
                        raise NotFound(f"queue {queue.name!r} has no sample {sample_id!r}")
                    where = [table.c.queue_id == queue.id, table.c.sample_id == sample_id]
                    if who == "reviewer":
                        where.append(table.c.reviewer == person)
                    latest = conn.execute(select(table.c.version, table.c.verdict, table.c.note).where(*where)
                                          .order_by(table.c.version.desc()).limit(1)).first()
                    if latest is not None and (latest.verdict, latest.note) == (verdict, note):
                        return  # unchanged: no new version
                    if latest is None and verdict is None:
                        return  # clearing what was never labelled
                    conn.execute(insert(table).values(
                        queue_id=queue.id, sample_id=sample_id, version=(latest.version if latest else 0) + 1,
                        verdict=verdict, note=note, created_at=utcnow(), **{who: person}))
                return
            except IntegrityError:
                if attempt == 4:
                    raise

    def _current(self, conn: Connection, table: Table, queue_id: int, who: str) -> builtins.list[TableRow]:
        keys = [table.c.sample_id] + ([table.c.reviewer] if who == "reviewer" else [])
        newest = (select(*keys, func.max(table.c.version).label("v")).where(table.c.queue_id == queue_id)
                  .group_by(*keys).subquery())
        on = (table.c.sample_id == newest.c.sample_id) & (table.c.version == newest.c.v)
        if who == "reviewer":
            on = on & (table.c.reviewer == newest.c.reviewer)
        return list(conn.execute(select(table).join(newest, on).where(table.c.queue_id == queue_id)))

    def labels(self, name: str) -> dict[str, dict[str, QueueLabel]]:
        """Every reviewer's current label: sample id -> reviewer -> label (cleared ones left out).
        Unblinded: for agreement, export and a lead's view, never for a reviewer's screen."""
        with self._engine.connect() as conn:
            queue_id = self._row(conn, name).id
            rows = self._current(conn, queue_labels, queue_id, "reviewer")
        out: dict[str, dict[str, QueueLabel]] = {}
        for row in rows:
            if row.verdict is not None:
                out.setdefault(row.sample_id, {})[row.reviewer] = _label(row, row.reviewer)
        return out

    def settlements(self, name: str) -> dict[str, QueueLabel]:
        """Each settled sample's current settlement (withdrawn ones left out)."""
        with self._engine.connect() as conn:
            queue_id = self._row(conn, name).id
            rows = self._current(conn, queue_settlements, queue_id, "author")
        return {row.sample_id: _label(row, row.author) for row in rows if row.verdict is not None}

    def history(self, name: str, sample_id: str) -> builtins.list[QueueLabel]:
        """Every version of every reviewer's label of one sample, oldest first."""
        with self._engine.connect() as conn:
            queue_id = self._row(conn, name).id
            rows = conn.execute(select(queue_labels).where(queue_labels.c.queue_id == queue_id,
                                                           queue_labels.c.sample_id == sample_id)
                                .order_by(queue_labels.c.id)).all()
        return [_label(row, row.reviewer) for row in rows]

    # --- a reviewer's view --------------------------------------------------------------------------
    def item(self, name: str, sample_id: str, reviewer: str | None = None) -> ReviewItem:
        """One sample as ``reviewer`` may see it: the judge and the others hidden until they labelled
        it (a lead sees everything: settling needs it)."""
        reviewer = reviewer or current_user()
        queue = self.get(name)
        with self._engine.connect() as conn:
            position = conn.execute(select(queue_samples.c.position).where(
                queue_samples.c.queue_id == queue.id, queue_samples.c.sample_id == sample_id)).scalar()
            if position is None:
                raise NotFound(f"queue {name!r} has no sample {sample_id!r}")
            idx = conn.execute(text("SELECT idx FROM samples WHERE dataset_id = :d AND sample_id = :s"),
                               {"d": _dataset_id(conn, queue.id), "s": sample_id}).scalar()
        labels = self.labels(name).get(sample_id, {})
        mine = labels.get(reviewer)
        revealed = mine is not None or reviewer in queue.leads
        item = ReviewItem(queue=name, sample_id=sample_id, position=int(position), idx=int(idx or 0),
                          reviewer=reviewer, mine=mine, revealed=revealed)
        if revealed:
            item.others = [label for who, label in sorted(labels.items()) if who != reviewer]
            item.judged = self.judged(queue, sample_id)
            item.settled = self.settlements(name).get(sample_id)
        return item

    def judged(self, queue: Queue, sample_id: str) -> builtins.list[JudgeSaid]:
        with self._engine.connect() as conn:
            rows = conn.execute(select(results.c.run_id, results.c.status, results.c.score, results.c.rationale,
                                       results.c.error, results.c.details)
                                .where(results.c.run_id.in_(queue.runs), results.c.sample_id == sample_id)
                                .order_by(results.c.run_id)).all()
        return [JudgeSaid(run_id=r.run_id, status=r.status, score=r.score, rationale=r.rationale, error=r.error,
                         details=_object(r.details))
                for r in rows]

    def progress(self, name: str) -> builtins.list[Progress]:
        """Per reviewer, how many of the queue's samples they labelled (assigned reviewers listed
        even before their first label)."""
        queue = self.get(name)
        counts: dict[str, int] = {user: 0 for user in queue.assignees}
        for per_sample in self.labels(name).values():
            for reviewer in per_sample:
                counts[reviewer] = counts.get(reviewer, 0) + 1
        return [Progress(reviewer=r, labelled=n, total=queue.size) for r, n in sorted(counts.items())]

    def next_for(self, name: str, reviewer: str | None = None) -> str | None:
        """The first sample (in queue order) the reviewer has not labelled and that still wants labels."""
        reviewer = reviewer or current_user()
        queue = self.get(name)
        labels = self.labels(name)
        for sample_id, _reason in self.samples(name):
            given = labels.get(sample_id, {})
            if reviewer not in given and len(given) < queue.labels_wanted:
                return sample_id
        return None


def _label(row: TableRow, person: str) -> QueueLabel:
    return QueueLabel(sample_id=row.sample_id, reviewer=person, version=row.version, verdict=row.verdict,
                      note=row.note or "", created_at=row.created_at)


def _check_verdict(verdict: str | None) -> None:
    if verdict is not None and verdict not in VERDICTS:
        raise Conflict(f"a review label is PASS, FAIL or NA (got {verdict!r})")


def _dataset_id(conn: Connection, queue_id: int) -> int:
    return int(conn.execute(select(review_queues.c.dataset_id).where(review_queues.c.id == queue_id)).scalar_one())


def _lock(conn: Connection, key: str) -> None:
    """Writers of one queue's row (or one sample's versions) take turns (database.take_turns)."""
    take_turns(conn, key)
