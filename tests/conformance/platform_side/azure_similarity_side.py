"""Azure's azure-ai-evaluation scores text pairs with its own evaluators (run in the platforms venv).

Reads {"pairs": [[output, reference], ...], "wordnet": folder} on stdin, writes {metric: [score, ...]}.
Azure's evaluators fetch nltk data at their first call (punkt, perluniprops, wordnet); nothing may be
downloaded here, so this side hands them the same data offline: WordNet 3.0 from Debian's
wordnet-base files through nltk's own reader, and nltk's Treebank word tokenizer without sentence
splitting (punkt is a download) in place of their ``nltk_tokenize``. Everything after tokenizing is
Azure's: which nltk function, its smoothing and weights, METEOR's alpha/beta/gamma, and ROUGE from
the copy of rouge_score Azure vendors (its own tokenizer: nothing replaced there).
"""

import io
import json
import sys
import warnings

import nltk
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.tokenize import word_tokenize

warnings.simplefilter("ignore")
payload = json.load(sys.stdin)
nltk.data.path.append(payload["wordnet"])

LEXNAMES = ["adj.all", "adj.pert", "adv.all", "noun.Tops"] + [f"x{n}" for n in range(4, 45)]


class Reader(WordNetCorpusReader):
    def open(self, fileid):
        if fileid == "lexnames":  # Debian leaves the list out; METEOR never reads it
            return io.StringIO("".join(f"{n:02d}\t{name}\t0\n" for n, name in enumerate(LEXNAMES)))
        return super().open(fileid)

    def map_wn(self, version="3.0"):
        return {}


import azure.ai.evaluation._common.utils as utils  # noqa: E402
from azure.ai.evaluation import (  # noqa: E402
    BleuScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    RougeType,
)
from azure.ai.evaluation._evaluators._bleu import _bleu  # noqa: E402
from azure.ai.evaluation._evaluators._gleu import _gleu  # noqa: E402
from azure.ai.evaluation._evaluators._meteor import _meteor  # noqa: E402
from nltk.translate import meteor_score  # noqa: E402


def offline_tokenize(text):
    return list(word_tokenize(text, preserve_line=True))


utils.ensure_nltk_data_downloaded = lambda: None
_meteor.ensure_nltk_data_downloaded = lambda: None
for module in (_bleu, _gleu, _meteor):
    module.nltk_tokenize = offline_tokenize
defaults = list(meteor_score.meteor_score.__defaults__)
defaults[2] = Reader(payload["wordnet"], None)  # (preprocess, stemmer, wordnet, alpha, beta, gamma)
meteor_score.meteor_score.__defaults__ = tuple(defaults)

rouge_types = {f"rouge_{n}": getattr(RougeType, f"ROUGE_{n}") for n in range(1, 6)} | {"rouge_l": RougeType.ROUGE_L}
evaluators = {"bleu": (BleuScoreEvaluator(), "bleu_score"), "gleu": (GleuScoreEvaluator(), "gleu_score"),
              "meteor": (MeteorScoreEvaluator(), "meteor_score")}
evaluators |= {name: (RougeScoreEvaluator(rouge_type=kind), "rouge_score") for name, kind in rouge_types.items()}
out = {}
for metric, (evaluator, field) in evaluators.items():
    out[metric] = [evaluator(response=o, ground_truth=r)[field] for o, r in payload["pairs"]]
print(json.dumps(out))
