"""Adaptive: GraphQL ``GraderCreateInput`` JSON plus a script that creates the grader with the SDK.

Adaptive has five grader types; the studio's function, binary judge, pre-built RAG judge and
external endpoint map onto FUNCTION, JUDGE, PREBUILT and REMOTE. Adaptive has no update, so the
script deletes an existing grader with the same key before creating it again.
"""

from __future__ import annotations

import ast
from pathlib import Path

from studio.core.json_types import JsonObject
from studio.core.kinds import ByKind
from studio.core.models import (
    BinaryJudge,
    BinaryShot,
    ExternalEndpoint,
    FunctionGrader,
    GraderDefinition,
    Metric,
    PrebuiltJudge,
    Turn,
)
from studio.core.safe_files import read_regular_text

from ._base import ExportResult, ImportResult, Platform, PlatformError, Support
from ._carried import carried_for
from ._fields import (
    dump_json,
    import_each,
    judge_model,
    peek_json,
    read_json,
    read_text,
    slug,
    unexported,
)
from ._syntax import parse_python

LABEL = "Adaptive"

PREBUILT_KEYS = {
    "faithfulness": "FAITHFULNESS",
    "answer_relevancy": "ANSWER_RELEVANCY",
    "context_relevancy": "CONTEXT_RELEVANCY",
}

# Adaptive's judge config requires both templates; a studio judge without its own templates gets
# these (Handlebars, written for the studio). Importing them back gives "no template" again.
DEFAULT_SYSTEM_TEMPLATE = """You grade one completion written by an AI assistant against a single criterion.
Decide PASS when the completion satisfies the criterion fully, FAIL when it does not, and NA when the
criterion does not apply to this conversation.

Criterion: {{{criteria}}}
{{#if examples.length}}

Graded examples:
{{#each examples}}
{{{this}}}
{{/each}}
{{/if}}

Answer with JSON following this schema: {{{output_schema}}}"""

DEFAULT_USER_TEMPLATE = """Conversation so far:
{{{context_str_without_last_user}}}

Last user message:
{{{last_user_turn_content}}}

Completion to grade:
{{{completion}}}"""

def has_async_grade(source: str) -> bool:
    """Adaptive's structure check: a top-level ``async def grade``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.AsyncFunctionDef) and n.name == "grade" for n in tree.body)


# ---- what Adaptive does with each kind it carries (keyed by kind: ``kinds.ByKind``) -------------

_SUPPORT: ByKind[Support] = ByKind("adaptive support")
#: each kind's (graderType, graderConfig, the definition fields they carry)
_CONFIG: ByKind[tuple[str, JsonObject, set[str]]] = ByKind("adaptive grader config")


@_SUPPORT.on(FunctionGrader)
def _function_support(grader: FunctionGrader) -> Support:
    if grader.contract != "adaptive":
        return Support.no(
            f"it uses the {grader.contract} contract; Adaptive runs only async def grade(thread) "
            "(export it to MKA1, which runs every per-sample contract in an adapter)"
        )
    if not has_async_grade(grader.source):
        return Support.no("Adaptive needs a top-level async def grade(thread) in the source")
    return Support.yes()


@_SUPPORT.on(BinaryJudge, PrebuiltJudge)
def _judge_support(grader: BinaryJudge | PrebuiltJudge) -> Support:
    if not (grader.model or grader.endpoint):
        return Support.no("it names no judge model or endpoint, and Adaptive requires a model")
    return Support.yes()


@_CONFIG.on(FunctionGrader)
def _function_config(grader: FunctionGrader, warnings: list[str]) -> tuple[str, JsonObject, set[str]]:
    config: JsonObject = {"sourceCode": grader.source}
    if grader.description:
        config["description"] = grader.description
    return "FUNCTION", {"function": config}, {"description", "source", "contract"}


@_CONFIG.on(BinaryJudge)
def _binary_config(grader: BinaryJudge, warnings: list[str]) -> tuple[str, JsonObject, set[str]]:
    model = judge_model(grader, LABEL, warnings)
    examples = [AdaptivePlatform._example(grader.key, s, warnings) for s in grader.examples]
    judge = {
        "model": model,
        "criteria": grader.criteria,
        "examples": [e for e in examples if e is not None],
        "systemTemplate": grader.system_template or DEFAULT_SYSTEM_TEMPLATE,
        "userTemplate": grader.user_template or DEFAULT_USER_TEMPLATE,
    }
    return "JUDGE", {"judge": judge}, {"criteria", "examples", "model", "endpoint", "system_template", "user_template"}


@_CONFIG.on(PrebuiltJudge)
def _prebuilt_config(grader: PrebuiltJudge, warnings: list[str]) -> tuple[str, JsonObject, set[str]]:
    prebuilt = {"key": PREBUILT_KEYS[grader.metric_type], "model": judge_model(grader, LABEL, warnings)}
    return "PREBUILT", {"prebuilt": prebuilt}, {"metric_type", "model", "endpoint"}


@_CONFIG.on(ExternalEndpoint)
def _remote_config(grader: ExternalEndpoint, warnings: list[str]) -> tuple[str, JsonObject, set[str]]:
    return "REMOTE", {"remote": {"url": grader.url}}, {"url"}


class AdaptivePlatform(Platform):
    name = "adaptive"
    label = LABEL
    imports = True

    # ---- export -------------------------------------------------------------------------------

    def _can_export(self, grader: GraderDefinition) -> Support:
        check = _SUPPORT.of(grader)
        return check(grader) if check is not None else Support.yes()

    def payload(self, grader: GraderDefinition, warnings: list[str]) -> JsonObject:
        """The ``GraderCreateInput`` as JSON (GraphQL field names)."""
        data: JsonObject = {"name": grader.name or grader.key, "key": grader.key}
        write = _CONFIG.of(grader)
        if write is None:  # pragma: no cover - can_export refuses the rest
            raise PlatformError(f"{LABEL} cannot express {grader.kind}")
        data["graderType"], data["graderConfig"], keep = write(grader, warnings)
        warnings += unexported(grader, {"key", "name", "metric"} | keep, LABEL)
        data["metric"] = {
            "name": grader.metric.key,
            "key": grader.metric.key,
            "kind": grader.metric.kind.upper(),
        }
        return data

    @staticmethod
    def _example(key: str, shot: BinaryShot, warnings: list[str]) -> JsonObject | None:
        if shot.verdict == "NA":
            warnings.append(f"{key}: an NA example is not exported (Adaptive examples are pass or fail)")
            return None
        if any(t.tool_calls or t.name or t.tool_call_id for t in shot.messages):
            warnings.append(f"{key}: tool calls in examples are not exported (Adaptive keeps role and content)")
        example: JsonObject = {
            "input": [{"role": t.role, "content": t.content} for t in shot.messages],
            "output": shot.completion,
            "pass": shot.verdict == "PASS",
        }
        if shot.reasoning:
            example["reasoning"] = shot.reasoning
        return example

    def _export(self, grader: GraderDefinition) -> ExportResult:
        warnings: list[str] = []
        data = self.payload(grader, warnings)
        files = {
            f"{grader.key}.adaptive.json": dump_json(data),
            f"{grader.key}.adaptive.py": self.script(grader, data),
        }
        return ExportResult(files=files, warnings=warnings)

    @staticmethod
    def script(grader: GraderDefinition, data: JsonObject) -> str:
        """A runnable script: delete the grader if the key exists, then create it."""
        payload = repr(dump_json(data))
        sdk_metric = grader.metric.key == grader.key
        if data["graderType"] == "FUNCTION" and sdk_metric and grader.metric.kind == "scalar":
            create = (
                "    config = PAYLOAD['graderConfig']['function']\n"
                "    client.graders.create.function(\n"
                "        key=KEY, fn=config['sourceCode'], description=config.get('description'),\n"
                "        name=PAYLOAD['name'], project=project,\n"
                "    )\n"
            )
        elif data["graderType"] == "REMOTE" and sdk_metric and grader.metric.kind == "scalar":
            create = (
                "    client.graders.create.external_endpoint(\n"
                "        key=KEY, url=PAYLOAD['graderConfig']['remote']['url'], name=PAYLOAD['name'],\n"
                "        project=project,\n"
                "    )\n"
            )
        else:
            create = (
                "    # graders.create.* cannot set every field of this grader (templates, metric),\n"
                "    # so the exact GraphQL input goes through the SDK's own client.\n"
                "    grader = GraderCreateInput.model_validate(PAYLOAD)\n"
                "    client._gql_client.create_grader(project=project, input=grader)\n"
            )
        return (
            f'"""Creates the Adaptive grader {grader.key!r} (exported by Grader Studio).\n\n'
            "Adaptive has no update: a grader with the same key is deleted first, then created again.\n"
            "Needs ADAPTIVE_URL, ADAPTIVE_API_KEY and ADAPTIVE_PROJECT in the environment.\n"
            '"""\n\n'
            "import json\nimport os\n\n"
            "from adaptive_sdk import Adaptive\n"
            "from adaptive_sdk.graphql_client import GraderCreateInput\n\n"
            f"KEY = {grader.key!r}\n"
            f"PAYLOAD = json.loads({payload})\n\n\n"
            "def main() -> None:\n"
            "    client = Adaptive(base_url=os.environ['ADAPTIVE_URL'], api_key=os.environ.get('ADAPTIVE_API_KEY'))\n"
            "    project = os.environ['ADAPTIVE_PROJECT']\n"
            "    if client.graders.get(grader_key=KEY, project=project) is not None:\n"
            "        client.graders.delete(grader_key=KEY, project=project)\n"
            f"{create}"
            "    print(f'created grader {KEY}')\n\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n"
        )

    # ---- import -------------------------------------------------------------------------------

    def detect(self, path: Path) -> bool:
        if path.suffix.lower() == ".py":
            try:
                text = read_regular_text(path)
            except (OSError, UnicodeDecodeError):
                return False
            return has_async_grade(text) and carried_for(text) in (None, self.name)  # not a HUD export
        data = peek_json(path)
        items = data if isinstance(data, list) else [data]
        return bool(items) and all(
            isinstance(i, dict) and "graderType" in i and "graderConfig" in i for i in items
        )

    def import_(self, path: Path, key: str | None = None) -> ImportResult:
        if path.suffix.lower() == ".py":
            source = read_text(path)
            parse_python(source, path)  # a syntax error (a file cut short) is named by its line
            if not has_async_grade(source):
                raise PlatformError(f"{path.name} has no top-level async def grade(thread)")
            grader = FunctionGrader(key=key or slug(path.stem.removesuffix(".adaptive")), source=source)
            return ImportResult(graders=[grader])
        result = import_each(read_json(path), self.from_payload, key,
                             fields=lambda item: {"name", "key", "metric", "graderType", "graderConfig"})
        if not result.graders:
            raise PlatformError("; ".join(result.report()) or f"{path.name}: no grader to import")
        return result

    def from_payload(self, data: JsonObject, key: str | None = None) -> GraderDefinition:
        if not isinstance(data, dict) or "graderConfig" not in data:
            raise PlatformError("not an Adaptive GraderCreateInput (no graderConfig)")
        grader_key = key or data.get("key") or slug(str(data.get("name", "")))
        name = data.get("name") or ""
        common: JsonObject = {"key": grader_key, "name": "" if name == grader_key else name}
        metric = data.get("metric") or {}
        if metric:
            common["metric"] = Metric(
                key=metric.get("key") or metric.get("name") or "score",
                kind="bool" if str(metric.get("kind", "")).upper() == "BOOL" else "scalar",
            )
        config = data["graderConfig"]
        kind = str(data.get("graderType", "")).upper()
        try:
            if kind == "FUNCTION":
                fn = config["function"]
                return FunctionGrader(
                    **common, source=fn["sourceCode"], description=fn.get("description") or ""
                )
            if kind == "JUDGE":
                judge = config["judge"]
                system = judge.get("systemTemplate")
                user = judge.get("userTemplate")
                return BinaryJudge(
                    **common,
                    model=judge.get("model"),
                    criteria=judge["criteria"],
                    examples=[self._shot(e) for e in judge.get("examples") or []],
                    system_template=None if system in (None, DEFAULT_SYSTEM_TEMPLATE) else system,
                    user_template=None if user in (None, DEFAULT_USER_TEMPLATE) else user,
                )
            if kind == "PREBUILT":
                prebuilt = config["prebuilt"]
                names = {v: k for k, v in PREBUILT_KEYS.items()}
                return PrebuiltJudge(
                    **common, metric_type=names[str(prebuilt["key"]).upper()], model=prebuilt.get("model")
                )
            if kind == "REMOTE":
                return ExternalEndpoint(**common, url=config["remote"]["url"])
        except (KeyError, TypeError) as exc:
            raise PlatformError(f"Adaptive grader {grader_key!r}: missing field {exc}") from exc
        if kind == "CUSTOM":
            raise PlatformError(
                f"Adaptive grader {grader_key!r} is CUSTOM: its logic lives in a recipe's code, "
                "so there is nothing to import"
            )
        raise PlatformError(f"Adaptive grader {grader_key!r} has an unknown graderType {kind!r}")

    @staticmethod
    def _shot(example: JsonObject) -> BinaryShot:
        return BinaryShot(
            messages=[Turn(role=t["role"], content=t["content"]) for t in example.get("input") or []],
            completion=example.get("output", ""),
            reasoning=example.get("reasoning") or "",
            verdict="PASS" if example.get("pass") else "FAIL",
        )


PLATFORM = AdaptivePlatform()
