"""The promptfoo export of a judge names a provider promptfoo can call: the endpoint's base URL and
model, never the endpoint's name as a model (issue 12)."""

from __future__ import annotations

from studio.core.models import BinaryJudge
from studio.core.models.endpoints import EndpointConfig
from studio.core.platforms import get_platform
from studio.core.platforms._fields import export_endpoints, load_yaml_text


def asserts(grader: BinaryJudge) -> tuple[list[dict], list[str]]:
    result = get_platform("promptfoo").export(grader)
    config = load_yaml_text(next(iter(result.files.values())), "config")
    return config["defaultTest"]["assert"], result.warnings


def test_a_known_endpoint_becomes_a_callable_provider() -> None:
    judge = BinaryJudge(key="polite", criteria="The answer is polite.", endpoint="local")
    endpoint = EndpointConfig(name="local", base_url="http://127.0.0.1:8765/v1", model="scripted-judge",
                              api_key_env="LOCAL_KEY")
    with export_endpoints({"local": endpoint}):
        items, _ = asserts(judge)
    assert items[0]["provider"] == {"id": "openai:chat:scripted-judge",
                                    "config": {"apiBaseUrl": "http://127.0.0.1:8765/v1", "apiKeyEnvar": "LOCAL_KEY"}}


def test_an_unknown_endpoint_is_not_written_as_a_model_name() -> None:
    judge = BinaryJudge(key="polite", criteria="The answer is polite.", endpoint="local")
    items, warnings = asserts(judge)
    assert "provider" not in items[0]
    assert any("not known" in w for w in warnings)
