"""Azure OpenAI: OpenAI's bodies, the deployment (the endpoint's ``model``) and the ``api-version``
in the URL, and the key in an ``api-key`` header."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from .openai import OpenAICompatible

if TYPE_CHECKING:
    from studio.core.models.endpoints import EndpointConfig


class Azure(OpenAICompatible):
    name = "azure"
    label = "Azure OpenAI"
    model_word = "deployment"
    api_version = True
    counting_hosts = (".openai.azure.com",)
    openai_encodings = False  # a deployment's name is the user's, not a model's

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"api-key": api_key} if api_key else {}

    def url_for(self, config: EndpointConfig, path: str, model: str | None = None) -> str:
        """The deployment's URL (``model``, else the endpoint's) with its api-version."""
        root = config.base_url.removesuffix("/openai")
        if problem := self.model_problem(model or config.model):
            raise ValueError(problem)  # JudgeClient refuses it first, with a sentence
        deployment = quote(model or config.model, safe="")
        return f"{root}/openai/deployments/{deployment}/{path.lstrip('/')}?api-version={config.api_version}"

    def model_problem(self, model: str) -> str | None:
        from studio.core.models.endpoints import deployment_problem

        return deployment_problem(model)


PROVIDER = Azure()
