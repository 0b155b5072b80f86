"""Human labels: versioned (a change keeps the old label), immutable in the database, and label
files read all or nothing with the bad line named."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.exc import DBAPIError

from studio.core.datasets.label_files import read_labels, write_labels
from studio.core.datasets.readers import DatasetError
from studio.core.models import Sample
from studio.core.models.labels import LabelInput
from studio.core.store import Library, NotFound
from studio.core.store.labels import ReplaceRefused


@pytest.fixture
def lib(library: Library) -> Library:
    library.datasets.create("qa", [Sample(id=f"q{i}", completion=str(i)) for i in range(6)])
    return library


def test_a_changed_label_keeps_its_old_version(lib: Library) -> None:
    lib.labels.put("qa", LabelInput(sample_id="q1", verdict="PASS", labeler="ana"))
    lib.labels.put("qa", LabelInput(sample_id="q1", verdict="FAIL", note="wrong unit", labeler="ben"), replace=True)
    assert lib.labels.current("qa")["q1"].verdict == "FAIL"
    history = lib.labels.history("qa", "q1")
    assert [(h.version, h.verdict, h.labeler) for h in history] == [(1, "PASS", "ana"), (2, "FAIL", "ben")]
    # the same label again adds no version; clearing adds one and hides the label
    assert lib.labels.put_many("qa", [LabelInput(sample_id="q1", verdict="FAIL", note="wrong unit")]) == 0
    lib.labels.put("qa", LabelInput(sample_id="q1"), replace=True)
    assert "q1" not in lib.labels.current("qa") and len(lib.labels.history("qa", "q1")) == 3


def test_another_persons_label_is_replaced_only_with_consent(lib: Library) -> None:
    """Issue 43: replacing (or clearing, or re-noting) someone else's current label needs replace=True;
    refused, the whole batch writes nothing and names each sample; the replaced version stays."""
    lib.labels.put_many("qa", [LabelInput(sample_id="q0", verdict="FAIL", labeler="ben"),
                               LabelInput(sample_id="q1", verdict="PASS", labeler="ana")])
    for attempt in ([LabelInput(sample_id="q0", verdict="PASS", labeler="me")],
                    [LabelInput(sample_id="q0", labeler="me")],  # clearing it
                    [LabelInput(sample_id="q0", verdict="FAIL", note="agreed", labeler="me")],  # a note on it
                    [LabelInput(sample_id="q2", verdict="PASS", labeler="me"),  # the batch: all or nothing
                     LabelInput(sample_id="q1", verdict="FAIL", labeler="me")]):
        with pytest.raises(ReplaceRefused) as refused:
            lib.labels.put_many("qa", attempt)
        assert refused.value.exit_code == 2 and "nothing was written" in str(refused.value).lower()
    assert [r.sample_id for r in refused.value.refused] == ["q1"] and "ana's PASS, v1" in str(refused.value)
    assert set(lib.labels.current("qa")) == {"q0", "q1"}
    assert [len(lib.labels.history("qa", s)) for s in ("q0", "q1", "q2")] == [1, 1, 0]
    # the same label again is no replacement; one's own label is corrected without consent
    assert lib.labels.put_many("qa", [LabelInput(sample_id="q0", verdict="FAIL", labeler="me")]) == 0
    assert lib.labels.put_many("qa", [LabelInput(sample_id="q0", verdict="PASS", labeler="ben")]) == 1
    # with consent: replaced, and ben's two versions kept before it
    assert lib.labels.put_many("qa", [LabelInput(sample_id="q0", verdict="NA", labeler="me")], replace=True) == 1
    assert [(h.verdict, h.labeler) for h in lib.labels.history("qa", "q0")] == [
        ("FAIL", "ben"), ("PASS", "ben"), ("NA", "me")]
    # a cleared label is nobody's: labelling the sample again asks nothing
    lib.labels.put("qa", LabelInput(sample_id="q1", labeler="ana"))
    assert lib.labels.put("qa", LabelInput(sample_id="q1", verdict="FAIL", labeler="me")).labeler == "me"


def test_a_label_changed_since_it_was_shown_is_refused(lib: Library) -> None:
    """``expected``: the version the writer was shown (0: none). Another version now refuses the
    write even with replace=True (the consent was for what was shown)."""
    assert lib.labels.put("qa", LabelInput(sample_id="q3", verdict="PASS", labeler="me"), expected=0).version == 1
    lib.labels.put("qa", LabelInput(sample_id="q3", verdict="FAIL", labeler="ana"), replace=True)  # meanwhile
    for replace in (False, True):
        with pytest.raises(ReplaceRefused) as refused:
            lib.labels.put("qa", LabelInput(sample_id="q3", verdict="NA", labeler="me"), expected=1, replace=replace)
        assert refused.value.refused[0].changed and refused.value.refused[0].current.labeler == "ana"
        assert "changed since v1 was shown" in str(refused.value)
    with pytest.raises(ReplaceRefused):  # shown as unlabelled, labelled since
        lib.labels.put("qa", LabelInput(sample_id="q3", verdict="NA", labeler="me"), expected=0)
    assert [h.verdict for h in lib.labels.history("qa", "q3")] == ["PASS", "FAIL"]
    # shown the version that is stored, and consenting: written
    assert lib.labels.put("qa", LabelInput(sample_id="q3", verdict="NA", labeler="me"),
                          expected=2, replace=True).version == 3


def test_label_sets_are_separate_and_belong_to_the_dataset(lib: Library) -> None:
    lib.labels.put("qa", LabelInput(sample_id="q0", score=4), key="quality")
    lib.labels.put("qa", LabelInput(sample_id="q0", verdict="NA"))
    assert lib.labels.keys("qa") == ["human", "quality"]
    assert lib.labels.current("qa", "quality")["q0"].score == 4
    assert lib.labels.current("qa")["q0"].verdict == "NA"


def test_label_versions_are_immutable_in_the_database(lib: Library) -> None:
    lib.labels.put("qa", LabelInput(sample_id="q2", verdict="PASS"))
    for statement in ("UPDATE labels SET verdict = 'FAIL'", "DELETE FROM labels"):
        with pytest.raises(DBAPIError, match="immutable"), lib.engine.begin() as conn:
            conn.exec_driver_sql(statement)


def test_an_unknown_sample_refuses_the_whole_batch(lib: Library) -> None:
    with pytest.raises(NotFound, match="nope"):
        lib.labels.put_many("qa", [LabelInput(sample_id="q0", verdict="PASS"),
                                   LabelInput(sample_id="nope", verdict="FAIL")])
    assert lib.labels.current("qa") == {}


def test_verdict_and_score_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        LabelInput(sample_id="x", verdict="PASS", score=3)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_label_files_in_jsonl_and_csv(tmp_path: Path, lib: Library) -> None:
    jsonl = _write(tmp_path, "l.jsonl", '{"sample_id": "q0", "label": "pass"}\n\n'
                                         '{"sample_id": "q1", "label": false, "note": "no"}\n'
                                         '{"sample_id": "q2", "score": 3, "labeler": "ana"}\n')
    items = read_labels(jsonl, lib.labels.sample_ids("qa"))
    assert [(i.verdict, i.score) for i in items] == [("PASS", None), ("FAIL", None), (None, 3.0)]
    csv_file = _write(tmp_path, "l.csv", "sample_id,label,score,note\nq3,NA,,unclear\nq4,,2.5,\nq5,TRUE,,\n")
    items = read_labels(csv_file, lib.labels.sample_ids("qa"))
    assert [(i.sample_id, i.verdict, i.score, i.note) for i in items] == [
        ("q3", "NA", None, "unclear"), ("q4", None, 2.5, ""), ("q5", "PASS", None, "")]
    lib.labels.put_many("qa", items)
    out = tmp_path / "back.csv"
    with out.open("w", newline="") as handle:
        write_labels(lib.labels.current("qa").values(), handle, "csv")
    assert [(i.sample_id, i.verdict, i.score) for i in read_labels(out)] == [
        ("q3", "NA", None), ("q4", None, 2.5), ("q5", "PASS", None)]


@pytest.mark.parametrize(("text", "line", "words"), [
    ('{"sample_id": "q0", "label": "PASS"}\n{"sample_id": "zz", "label": "PASS"}\n', 2, "unknown sample id 'zz'"),
    ('{"sample_id": "q0", "label": "maybe"}\n', 1, "not PASS, FAIL, NA"),
    ('{"sample_id": "q0"}\n', 1, "give a label"),
    ('{"sample_id": "q0", "score": "high"}\n', 1, "not a number"),
    ('{"sample_id": "q0", "label": "PASS", "score": 2}\n', 1, "not both"),
    ('{"sample_id": "q0", "label": "PASS"}\n{"sample_id": "q0", "label": "FAIL"}\n', 2, "already labelled on line 1"),
    ('{"sample_id": "q0", "label": "PASS"}\n{broken\n', 2, "not valid JSON"),
    ('["q0", "PASS"]\n', 1, "must be an object"),
])
def test_a_bad_label_file_names_its_line(tmp_path: Path, lib: Library, text: str, line: int, words: str) -> None:
    path = _write(tmp_path, "bad.jsonl", text)
    with pytest.raises(DatasetError) as caught:
        read_labels(path, lib.labels.sample_ids("qa"))
    assert caught.value.line == line and words in str(caught.value)
