"""OpenAI text_similarity: every metric the studio computes equals, pair by pair, the same metric in an
independent maintained package (issue 46).

BLEU, GLEU, METEOR and ROUGE 1-5/L are held to Azure's ``azure-ai-evaluation`` evaluators, which
document OpenAI-compatible text-similarity graders (run in the platforms venv by
platform_side/azure_similarity_side.py; ROUGE there is Azure's own vendored copy of rouge_score).
fuzzy_match is held to its definition computed here from scratch (the normalised Indel similarity:
2 * LCS / (len(a) + len(b)), 1.0 for two empty strings), since Azure has no local fuzzy evaluator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance_samples import TEXTS, compare
from platforms_env import VENV_PYTHON, needs_module, run_json, unavailable

from studio.core.graders import similarity

SIDE = Path(__file__).parent / "platform_side" / "azure_similarity_side.py"
SENTENCES = [
    "The cat sat on the mat.", "A cat was sitting on the mat.", "the cat sat on the mat",
    "Paris is the capital of France.", "France's capital city is Paris!", "Berlin is the capital of Germany.",
    "It's raining; bring an umbrella -- or don't.", "Don't forget: the meeting's at 3 p.m. (room 4B).",
    "Dogs are running quickly through the parks.", "A dog runs quick in the park.",
    "Le chat est assis sur le tapis.", "Der Hund läuft schnell durch den Park.", "東京は日本の首都です。",
    "Ça va? Très bien, merci!", "naïve café résumé", "The quick brown fox jumps over the lazy dog. " * 12,
    "A quick brown dog jumps over the lazy fox, and then it jumps again. " * 10,
    "I don't know.", "Answer: 42", "42", "forty-two", "e = mc^2", "\"Quoted\" text, with 'marks'.",
    "Use the Forgot password link on the sign-in page.", "Use the Forgot password link",
]


def pairs(count: int = 300) -> list[tuple[str, str]]:
    """Every sentence against itself, neighbours, then a fixed mix with the tricky texts
    (unicode, empty strings, whitespace, punctuation) and the long texts."""
    import random

    rng = random.Random(46)
    pool = SENTENCES + TEXTS
    found = [(s, s) for s in SENTENCES] + list(zip(SENTENCES, SENTENCES[1:], strict=False)) + [("", ""), ("", "a"),
                                                                                                ("a", "")]
    while len(found) < count:
        found.append((rng.choice(pool), rng.choice(pool)))
    return found


def indel_similarity(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    previous = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b, 1):
            row.append(previous[j - 1] + 1 if x == y else max(previous[j], row[j - 1]))
        previous = row
    return 2 * previous[-1] / (len(a) + len(b))


def test_fuzzy_match_is_the_normalised_indel_similarity() -> None:
    found = pairs()
    ours = [similarity.fuzzy_match(o, r) for o, r in found]
    theirs = [indel_similarity(o, r) for o, r in found]
    bad = compare("indel definition", ours, theirs, [repr(p)[:80] for p in found])
    assert not bad, "\n".join(bad[:20])


def test_every_nltk_and_rouge_metric_equals_azure_pair_by_pair() -> None:
    needs_module("azure.ai.evaluation")
    folder = similarity.wordnet_dir()
    if folder is None:
        unavailable("WordNet is not installed (apt-get install wordnet-base): METEOR cannot be compared")
    found = pairs()
    theirs = run_json([str(VENV_PYTHON), str(SIDE)], {"pairs": found, "wordnet": str(folder)}, timeout=900)
    assert set(theirs) == {"bleu", "gleu", "meteor", *similarity.ROUGE}
    labels = [repr(p)[:80] for p in found]
    for metric, scores in theirs.items():
        function = similarity.text_metric(metric)
        ours = [function(o, r) for o, r in found]
        bad = compare("azure-ai-evaluation", ours, [float(s) for s in scores], [f"{metric} {x}" for x in labels])
        assert not bad, f"{metric}:\n" + "\n".join(bad[:20])


def test_meteor_without_wordnet_is_refused_with_the_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(similarity, "WORDNET_DIRS", (str(tmp_path),))
    monkeypatch.setenv("STUDIO_WORDNET_DIR", str(tmp_path))
    similarity.wordnet.cache_clear()
    try:
        with pytest.raises(similarity.MetricUnavailable, match="wordnet-base"):
            similarity.text_metric("meteor")
    finally:
        similarity.wordnet.cache_clear()
