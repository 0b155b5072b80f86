"""A judge exported to MKA1 as a ``model_backed`` Python grader that sends the studio's exact messages.

MKA1 runs Python graders only, and lets one call a model through ``ctx.responses_create`` (the
Responses API shape; the gateway makes the call with the run's credentials). So a binary, range or
rubric judge travels as ``grade(sample, item, ctx)``: it fills the judge's messages from the row's
slots (the fields an export writes on every row, computed by the studio's own code; else read from
MKA1's sample and row), asks with the judge's model, temperature, token limit and answer schema, and
reads the answer with the studio's runtime (``_judge_runtime``, embedded): the verdict, the rubric's
clamped score, the range judge's second ``SCORE:`` call weighted by the score token's logprobs.

The studio runs the exported grader itself through its MKA1 contract and model bridge, which is how
the tests prove the requests carry ``render``'s messages and the scores equal the studio's.
"""

from __future__ import annotations

import math

from studio.core.models import GraderDefinition

from ._base import PlatformError
from ._fields import chosen_model, docstring, export_model
from ._judge_prompts import PortableJudge, embedded_runtime, model_id, portable

#: what the runtime reads and MKA1 needs: no endpoint URL or key name (the gateway makes the call)
_CONFIG_KEYS = ("protocol", "messages", "model", "temperature", "max_tokens", "answer_schema", "verdicts",
                "score_range", "normalize", "score_question", "logprobs")
#: calls a sample can make: one, or the range judge's reasoning + score + four sampled scores
_RANGE_CALLS = 6


def portable_for_mka1(grader: GraderDefinition) -> tuple[PortableJudge, bool]:
    """The judge in portable form, and whether its model is ``auto`` (none known: the run's judge_model).

    MKA1 can name no model and take the run's ``judge_model``, so an unknown model is not a refusal here.
    """
    try:
        model_id(grader)
    except PlatformError:
        if chosen_model():
            raise
        with export_model("auto"):
            return portable(grader), True
    return portable(grader), False


def max_calls(judge: PortableJudge) -> int:
    return _RANGE_CALLS if judge.protocol == "range" else 1


def timeout_seconds(judge: PortableJudge) -> int:
    """MKA1's per-sample limit (whole seconds, at most 600): the calls one after another, each at the
    endpoint's request timeout."""
    calls = 2 if judge.protocol == "range" else 1
    return max(30, min(600, math.ceil(judge.timeout * calls)))


def source(grader: GraderDefinition, judge: PortableJudge) -> str:
    """The grader module: ``grade(sample, item, ctx)`` with the runtime and the judge embedded."""
    about = (f"{grader.name or grader.key}: a Grader Studio {grader.kind.replace('_', ' ')} ({grader.key!r}) as "
             "an MKA1 model_backed grader.\n\nIt sends the studio's exact messages through ctx.responses_create "
             "and reads the answer as the studio does. Rows written by the studio's export carry the prompt's "
             "slots (conversation, judge_reference, input, ground_truth, var_*); other rows have them read from "
             "MKA1's sample and row.")
    return (
        f"{docstring(about)}\n\n"
        "import json\n"
        "import types\n\n"
        f"{embedded_runtime({k: judge.config()[k] for k in _CONFIG_KEYS})}"
        f"METRIC = {grader.metric.key!r}\n"
        "SLOTS = ('conversation', 'judge_reference', 'input', 'ground_truth')\n\n\n"
        "def _text(value):\n"
        "    return '' if value is None else value if isinstance(value, str) else json.dumps(value)\n\n\n"
        "def _fields(sample, item):\n"
        "    \"\"\"The prompt's slots: the row's own (the studio's export wrote them), else read from MKA1's\n"
        "    sample and row: the conversation from item['messages'] (else the prompt as one user turn).\"\"\"\n"
        "    prompt = _text(item.get('prompt') if item.get('prompt') is not None else sample.get('prompt'))\n"
        "    turns = item.get('messages')\n"
        "    if isinstance(turns, list) and all(isinstance(t, dict) for t in turns):\n"
        "        conversation = '\\n'.join(f\"{t.get('role', 'user')}: {_text(t.get('content'))}\" for t in turns)\n"
        "    else:\n"
        "        conversation = f'user: {prompt}'\n"
        "    target = item.get('target', item.get('reference_answer'))\n"
        "    fields = {'conversation': conversation, 'judge_reference': _text(target),\n"
        "              'input': item['input'] if isinstance(item.get('input'), str) else prompt,\n"
        "              'ground_truth': _text(target)}\n"
        "    rubric_vars = item.get('rubric_vars')\n"
        "    if isinstance(rubric_vars, dict):\n"
        "        fields.update({f'var_{k}': v if isinstance(v, str) else format(v) for k, v in rubric_vars.items()})\n"
        "    fields.update({k: v for k, v in item.items() if k in SLOTS or k.startswith('var_')})\n"
        "    fields['completion'] = _text(sample.get('output_text'))  # the output under judgement\n"
        "    return fields\n\n\n"
        "def _answer(response):\n"
        "    \"\"\"The Responses API's text and, when given, the output tokens' logprobs (the runtime's shape).\"\"\"\n"
        "    parts, tokens = [], None\n"
        "    for out in response.get('output') or []:\n"
        "        for content in out.get('content') or [] if isinstance(out, dict) else []:\n"
        "            if not isinstance(content, dict) or content.get('type') != 'output_text':\n"
        "                continue\n"
        "            parts.append(content.get('text') or '')\n"
        "            for item in content.get('logprobs') or []:\n"
        "                top = {}\n"
        "                for alt in item.get('top_logprobs') or []:\n"
        "                    top[str(alt['token'])] = max(float(alt['logprob']), top.get(str(alt['token']), float('-inf')))\n"
        "                tokens = (tokens or []) + [{'token': str(item['token']), 'logprob': float(item['logprob']),\n"
        "                                            'top': top}]\n"
        "    text = response.get('output_text')\n"
        "    return {'text': text if isinstance(text, str) else ''.join(parts), 'logprobs': tokens}\n\n\n"
        "def _asker(ctx):\n"
        "    async def ask(messages, temperature, max_tokens, logprobs, seed, schema):\n"
        "        request = {'model': JUDGE['model'], 'input': messages, 'temperature': temperature,\n"
        "                   'max_output_tokens': max_tokens}\n"
        "        if schema is not None:\n"
        "            request['text'] = {'format': {'type': 'json_schema', 'name': 'answer', 'schema': schema,\n"
        "                                          'strict': False}}\n"
        "        if logprobs:\n"
        "            request.update(top_logprobs=20, include=['message.output_text.logprobs'])\n"
        "        # the Responses API takes no seed: the range judge's fallback samples go without one\n"
        "        return _answer(ctx.responses_create(**request))\n"
        "    return ask\n\n\n"
        "def _run(coroutine):\n"
        "    \"\"\"The runtime's coroutine to its end: every call it awaits is synchronous, so it never suspends.\"\"\"\n"
        "    try:\n"
        "        coroutine.send(None)\n"
        "    except StopIteration as done:\n"
        "        return done.value\n"
        "    coroutine.close()\n"
        "    raise RuntimeError('the judge runtime waited on something other than ctx')\n\n\n"
        "def grade(sample, item, ctx):\n"
        "    sample, item = sample or {}, item or {}\n"
        "    fields = _fields(sample, item)\n"
        "    try:\n"
        "        messages = _RUNTIME.fill(JUDGE['messages'], fields)\n"
        "    except KeyError as missing:\n"
        "        raise ValueError(f'the row has no value for the prompt slot {missing}') from None\n"
        "    result = _run(_RUNTIME.grade(JUDGE, messages, fields['completion'], _asker(ctx)))\n"
        "    if 'skipped' in result:  # NA: the studio leaves the sample out; MKA1's mean counts a 0\n"
        "        return {'scores': {METRIC: 0.0}, 'judge': {'verdict': 'NA', 'skipped': True,\n"
        "                                                  'rationale': result['skipped']}}\n"
        "    if 'error' in result:\n"
        "        if JUDGE['protocol'] != 'rubric':  # the studio records an error, not a score\n"
        "            raise ValueError(result['error'])\n"
        "        return {'scores': {METRIC: result['score']}, 'judge': {'error': result['error']}}\n"
        "    return {'scores': {METRIC: result['score']},\n"
        "            'judge': {'rationale': result['reason'], **(result.get('details') or {})}}\n"
    )
