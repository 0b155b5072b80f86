"""OpenAI's ``text_similarity`` metrics, computed offline with maintained implementations.

OpenAI names the metrics (fuzzy_match, bleu, gleu, meteor, rouge_1..rouge_5, rouge_l, cosine) but
not their code; Azure's ``azure-ai-evaluation`` documents OpenAI-compatible ones and computes them
with nltk (BLEU with smoothing method 4, GLEU, METEOR with alpha 0.9, beta 3, gamma 0.5) and the
``rouge_score`` package (F-measure, no stemming). The studio uses the same maintained packages with
the same settings, so a score is the same number sample by sample (tests/conformance/
test_openai_similarity.py holds them equal). Why these packages and the one difference (tokenizing
without a download) are in docs/openai.md.

Nothing is downloaded at run time: METEOR's WordNet is read from Debian's ``wordnet-base`` files
(``/usr/share/wordnet``) by nltk's own reader; without them METEOR alone is refused with a sentence.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

from studio.core.errors import StudioError
from studio.core.json_types import JsonObject

#: where Debian's wordnet-base puts WordNet 3.0 (override with STUDIO_WORDNET_DIR)
WORDNET_DIRS = ("/usr/share/wordnet",)
ROUGE = {f"rouge_{n}": f"rouge{n}" for n in range(1, 6)} | {"rouge_l": "rougeL"}
METRICS = ("fuzzy_match", "bleu", "gleu", "meteor", *ROUGE, "cosine")

#: WordNet 3.0's lexicographer files (lexnames(5WN)); Debian's wordnet-base leaves the list out and
#: nltk's reader needs it, although METEOR never reads a synset's lexname
_LEXNAMES = ["adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl"]


class MetricUnavailable(StudioError):
    """A metric whose data is not installed (METEOR without WordNet): one sentence naming the install."""


def tokens(text: str) -> list[str]:
    """nltk's word tokenizer (Treebank rules) over the text as one line: sentence splitting would
    need nltk's punkt model, a download, so the text is not split into sentences first."""
    from nltk.tokenize import word_tokenize

    return list(word_tokenize(text, preserve_line=True))


def fuzzy_match(output: str, reference: str) -> float:
    """rapidfuzz's normalised Indel similarity (``fuzz.ratio`` / 100): 1.0 for equal strings."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(output, reference)) / 100.0


def bleu(output: str, reference: str) -> float:
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    with warnings.catch_warnings():  # nltk warns on empty or short texts; the score is still its score
        warnings.simplefilter("ignore")
        return float(sentence_bleu([tokens(reference)], tokens(output),
                                   smoothing_function=SmoothingFunction().method4))


def gleu(output: str, reference: str) -> float:
    from nltk.translate.gleu_score import sentence_gleu

    return float(sentence_gleu([tokens(reference)], tokens(output)))


def wordnet_dir() -> Path | None:
    for folder in (os.environ.get("STUDIO_WORDNET_DIR"), *WORDNET_DIRS):
        if folder and (Path(folder) / "data.noun").is_file() and (Path(folder) / "index.noun").is_file():
            return Path(folder)
    return None


@cache
def wordnet() -> object:
    """nltk's WordNet reader over the installed WordNet 3.0 files, or MetricUnavailable."""
    folder = wordnet_dir()
    if folder is None:
        raise MetricUnavailable("meteor needs WordNet 3.0 and none is installed: install Debian's wordnet-base "
                                "(apt-get install wordnet-base) or set STUDIO_WORDNET_DIR to its folder")
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if str(folder) not in nltk.data.path:  # nltk reads only below its data path
        nltk.data.path.append(str(folder))

    class _Reader(WordNetCorpusReader):  # type: ignore[misc]  # nltk ships no types: its classes are Any
        def open(self, fileid: str) -> object:
            if fileid == "lexnames":
                return io.StringIO("".join(f"{n:02d}\t{name}\t0\n" for n, name in enumerate(_LEXNAMES)))
            return super().open(fileid)

        def map_wn(self, version: str = "3.0") -> JsonObject:
            return {}  # the multilingual mapping (OMW) is not used by METEOR

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _Reader(str(folder), None)


def meteor(output: str, reference: str) -> float:
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score([tokens(reference)], tokens(output), alpha=0.9, beta=3.0, gamma=0.5,
                              wordnet=wordnet()))


class _RougeScore(Protocol):
    fmeasure: float


class _RougeScorer(Protocol):
    """rouge_score's ``RougeScorer``: (target, prediction) -> a score per ROUGE kind."""

    def score(self, target: str, prediction: str) -> Mapping[str, _RougeScore]: ...


@cache
def _rouge_scorer(kind: str) -> _RougeScorer:
    from rouge_score import rouge_scorer

    scorer: _RougeScorer = rouge_scorer.RougeScorer([kind])  # rouge_score ships no types
    return scorer


def rouge(metric: str) -> Callable[[str, str], float]:
    kind = ROUGE[metric]

    def score(output: str, reference: str) -> float:
        return float(_rouge_scorer(kind).score(reference, output)[kind].fmeasure)

    return score


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two embeddings; 0.0 when either is all zeros (no direction to compare)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norm if norm else 0.0


def text_metric(metric: str) -> Callable[[str, str], float]:
    """The local scoring function of ``metric`` (every metric but cosine, which needs an endpoint)."""
    table: dict[str, Callable[[str, str], float]] = {"fuzzy_match": fuzzy_match, "bleu": bleu, "gleu": gleu,
                                                     "meteor": meteor}
    if metric in ROUGE:
        return rouge(metric)
    if metric not in table:
        raise MetricUnavailable(f"unknown text_similarity metric {metric!r}; one of {', '.join(METRICS)}")
    if metric == "meteor":
        wordnet()  # refused up front, before the first sample
    return table[metric]
