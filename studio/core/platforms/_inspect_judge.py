"""A judge exported to Inspect AI as a custom ``@scorer`` that sends the studio's exact messages.

The scorer fills the judge's messages from the sample's metadata (the slots the eval export writes
on every row, computed by the studio's own code) and the output under judgement, asks the model
bound to Inspect's ``grader`` role (else the judge's own model and base URL) through Inspect's
``get_model().generate`` with the judge's temperature and token limit, and reads the answer with
the studio's runtime (``_judge_runtime``, embedded), logprob-weighted range scores included. Inspect
records every call in its log, which is how the tests prove the messages equal ``render``.
"""

from __future__ import annotations

from studio.core.judges.http.providers import get_provider

from ._judge_prompts import PortableJudge, embedded_runtime


def inspect_model(judge: PortableJudge) -> str:
    """Inspect's ``provider/model`` for the judge's endpoint: Anthropic, OpenAI itself, or any other
    OpenAI-compatible server through Inspect's generic ``openai-api`` provider (which sends the
    request as it is; the ``openai`` provider adapts it to what it guesses of OpenAI's models)."""
    if (prefix := get_provider(judge.provider_kind).inspect_prefix) is not None:
        return f"{prefix}/{judge.model}"
    if judge.base_url and "api.openai.com" not in judge.base_url:
        return f"openai-api/studio/{judge.model}"
    return f"openai/{judge.model}"


def body(judge: PortableJudge) -> str:
    """The ``_score`` function (and what it needs) for the generated Inspect module."""
    return (
        "import json\n"
        "import os\n\n"
        "from inspect_ai.model import (\n"
        "    ChatMessageAssistant,\n"
        "    ChatMessageSystem,\n"
        "    ChatMessageUser,\n"
        "    GenerateConfig,\n"
        "    get_model,\n"
        ")\n\n"
        f"{embedded_runtime(judge.config())}"
        f"MODEL = {inspect_model(judge)!r}\n"
        "_ROLES = {'system': ChatMessageSystem, 'user': ChatMessageUser, 'assistant': ChatMessageAssistant}\n\n\n"
        "def _model():\n"
        "    \"\"\"The model bound to the 'grader' role (eval --model-role grader=...), else the judge's own.\"\"\"\n"
        "    try:\n"
        "        return get_model(role='grader', required=True)\n"
        "    except Exception:\n"
        "        key_env = JUDGE.get('api_key_env')\n"
        "        # chat completions, as the studio asks (not OpenAI's Responses API)\n"
        "        extra = {'responses_api': False} if MODEL.startswith('openai/') else {}\n"
        "        # a server the judge reaches without a key (a local model) gets a placeholder one\n"
        "        key = os.environ.get(key_env) if key_env else (None if MODEL.startswith(('openai/', 'anthropic/'))\n"
        "                                                       else os.environ.get('STUDIO_API_KEY', 'no-key'))\n"
        "        return get_model(MODEL, base_url=JUDGE.get('base_url'), api_key=key, **extra)\n\n\n"
        "async def _ask(messages, temperature, max_tokens, logprobs, seed, schema):\n"
        "    chat = [_ROLES[m['role']](content=m['content']) for m in messages]\n"
        "    config = GenerateConfig(temperature=temperature, max_tokens=max_tokens, seed=seed,\n"
        "                            logprobs=True if logprobs else None, top_logprobs=20 if logprobs else None)\n"
        "    output = await _model().generate(chat, config=config)\n"
        "    tokens = None\n"
        "    found = output.choices[0].logprobs if output.choices else None\n"
        "    if found is not None:\n"
        "        tokens = [{'token': t.token, 'logprob': t.logprob,\n"
        "                   'top': {a.token: a.logprob for a in (t.top_logprobs or [])}} for t in found.content]\n"
        "    return {'text': output.completion, 'logprobs': tokens}\n\n\n"
        "def _fields(state: TaskState, output: str, target: str) -> dict:\n"
        "    \"\"\"The prompt's slots: the row's own (the studio wrote them), else read from Inspect's state.\"\"\"\n"
        "    turns = list(state.messages)\n"
        "    if turns and turns[-1].role == 'assistant':\n"
        "        turns = turns[:-1]\n"
        "    derived = {'conversation': '\\n'.join(f'{m.role}: {m.text}' for m in turns),\n"
        "               'judge_reference': target, 'input': state.input_text, 'ground_truth': target}\n"
        "    return {**derived, **(state.metadata or {}), 'completion': output}\n\n\n"
        "async def _score(state: TaskState, output: str, target: str) -> Score:\n"
        "    fields = _fields(state, output, target)\n"
        "    messages = _RUNTIME.fill(JUDGE['messages'], fields)\n"
        "    result = await _RUNTIME.grade(JUDGE, messages, output, _ask)\n"
        "    if 'skipped' in result:  # NA: the studio leaves the sample out; Inspect's mean counts a 0\n"
        "        return Score(value=0.0, answer=output, explanation=result['skipped'],\n"
        "                     metadata={'verdict': 'NA', 'skipped': True})\n"
        "    if 'error' in result:\n"
        "        return Score(value=result['score'], answer=output, explanation=result['error'],\n"
        "                     metadata={'error': result['error']})\n"
        "    return Score(value=result['score'], answer=output, explanation=result['reason'],\n"
        "                 metadata=result.get('details') or {})\n"
    )
