"""The promptfoo export of a judge names a provider promptfoo can call: the endpoint's base URL and
model, never the endpoint's name as a model (issue 12)."""

from __future__ import annotations

from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.platforms import get_platform
from studio.core.platforms._fields import export_endpoints, load_yaml_text


def asserts(grader: BinaryJudge) -> tuple[list[dict], list[str]]:
    result = get_platform("promptfoo").export(grader)
    config = load_yaml_text(next(t for p, t in result.files.items() if p.endswith(".yaml")), "config")
    return config["defaultTest"]["assert"], result.warnings


def test_a_known_endpoint_becomes_a_callable_provider() -> None:
    judge = BinaryJudge(key="polite", criteria="The answer is polite.", endpoint="local")
    endpoint = EndpointConfig(name="local", base_url="http://127.0.0.1:8765/v1", model="scripted-judge",
                              api_key_env="LOCAL_KEY")
    with export_endpoints({"local": endpoint}):
        items, _ = asserts(judge)
    provider = items[0]["provider"]
    assert provider["id"] == "file://studio_judge_provider.py"  # sends the studio's messages (issue 22)
    config = provider["config"]
    assert (config["base_url"], config["model"], config["api_key_env"]) == (
        "http://127.0.0.1:8765/v1", "scripted-judge", "LOCAL_KEY")


def test_an_unknown_endpoint_is_not_written_as_a_model_name() -> None:
    judge = BinaryJudge(key="polite", criteria="The answer is polite.", endpoint="local")
    items, warnings = asserts(judge)
    assert "provider" not in items[0]
    assert any("not known" in w for w in warnings)
