"""Settings: the judge endpoints (with a Test button and an API key kept in the OS keyring, never in
the library file) and the theme."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from studio.core.judges.http.providers import get_provider, provider_names
from studio.core.models.broken import BrokenRow

from ..context import AppContext
from ..file_dialogs import open_file
from ..messages import Messages, describe_error
from ..qt import Qt, QtWidgets, Signal

if TYPE_CHECKING:  # imported where used: the window opens without the endpoints' models
    from studio.core.models.endpoints import EndpointConfig
    from studio.core.store.endpoints import EndpointRepository


def probe(config: EndpointConfig, api_key: str | None, repo: EndpointRepository | None = None) -> tuple[float, bool, str, list[str]]:
    """Off the GUI thread: the endpoint probe (``endpoints test``); (latency ms, logprobs supported,
    reply, notes). A saved endpoint keeps what the probe found (logprobs, schema dialect, and
    concurrency 1 for a single-slot local server)."""
    from studio.core.judges.http.probe import apply_probe, probe_endpoint

    result = asyncio.run(probe_endpoint(config, api_key))
    updated, changes = apply_probe(config, result)
    if repo is not None and config.name in repo.names():
        repo.save(updated)
    notes = [f"Route: {result.route}.", f"Structured output: {result.structured_output}.",
             *result.notes, *changes]
    return result.latency_ms, result.logprobs, result.reply, notes


def reply_excerpt(text: str, limit: int = 80) -> str:
    """The test reply on one line, shortened at a word boundary (never mid-word), marked when cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,;:") + " …"


class EndpointsPage(QtWidgets.QWidget):
    changed = Signal()

    def __init__(self, ctx: AppContext, messages: Messages, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.messages = messages

        self.repo = ctx.library.endpoints
        self.list = QtWidgets.QListWidget()
        self.list.setMaximumWidth(220)
        self.add_button = QtWidgets.QPushButton("Add")
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.name = QtWidgets.QLineEdit(placeholderText="my-judge")
        self.kind = QtWidgets.QComboBox()
        self.kind.addItems(provider_names())
        self.kind.setToolTip("openai: any OpenAI-compatible server (vLLM, Ollama, LiteLLM, OpenRouter); "
                             "azure: Azure OpenAI (Model is the deployment name)")
        self.base_url = QtWidgets.QLineEdit(placeholderText="http://127.0.0.1:8080/v1")
        self.model = QtWidgets.QLineEdit(placeholderText="gpt-4o-mini")
        self.api_key = QtWidgets.QLineEdit(placeholderText="stored in the OS keyring, never in the library")
        self.api_key.setEchoMode(QtWidgets.QLineEdit.EchoMode.Password)
        self.api_key_env = QtWidgets.QLineEdit(placeholderText="or an environment variable, e.g. OPENAI_API_KEY")
        self.api_version = QtWidgets.QLineEdit(placeholderText="Azure only, e.g. 2024-10-21")
        self.proxy = QtWidgets.QLineEdit(
            placeholderText="empty: HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, NO_PROXY, as curl reads them")
        self.proxy.setToolTip("This endpoint's proxy, e.g. http://proxy.corp:3128; it wins over the "
                              "environment. No credentials here: keep them in HTTPS_PROXY.")
        self.ca_bundle = QtWidgets.QLineEdit(placeholderText="empty: SSL_CERT_FILE / SSL_CERT_DIR, else certifi")
        self.ca_bundle.setToolTip("A PEM file of extra CA certificates this endpoint trusts (a company root)")
        self.ca_browse = QtWidgets.QPushButton("Browse…")
        self.ca_browse.clicked.connect(self._pick_ca_bundle)
        ca_row = QtWidgets.QHBoxLayout()
        ca_row.setContentsMargins(0, 0, 0, 0)
        ca_row.addWidget(self.ca_bundle, 1)
        ca_row.addWidget(self.ca_browse)
        self.concurrency = QtWidgets.QSpinBox(minimum=1, maximum=1024, value=8)
        self.timeout = QtWidgets.QDoubleSpinBox(minimum=1, maximum=3600, value=60, suffix=" s")
        # text, not a spin box: a price is an exact decimal (0.15), kept as typed
        self.price_input = QtWidgets.QLineEdit(placeholderText="USD per 1M prompt tokens (empty: no price)")
        self.price_output = QtWidgets.QLineEdit(placeholderText="USD per 1M completion tokens (empty: no price)")
        self.price_cached_input = QtWidgets.QLineEdit(
            placeholderText="USD per 1M cached tokens (empty: input price)")
        self.save_button = QtWidgets.QPushButton("Save endpoint")
        self.test_button = QtWidgets.QPushButton("Test")
        self.test_button.setToolTip("Send one tiny request and report latency and logprob support")
        self.result = QtWidgets.QLabel()
        self.result.setWordWrap(True)
        form = QtWidgets.QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("API", self.kind)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key", self.api_key)
        form.addRow("Key variable", self.api_key_env)
        form.addRow("API version", self.api_version)
        form.addRow("Proxy", self.proxy)
        form.addRow("CA bundle", ca_row)
        form.addRow("Concurrency", self.concurrency)
        form.addRow("Timeout", self.timeout)
        form.addRow("Input price", self.price_input)
        form.addRow("Output price", self.price_output)
        form.addRow("Cached input price", self.price_cached_input)
        actions = QtWidgets.QHBoxLayout()
        actions.addWidget(self.save_button)
        actions.addWidget(self.test_button)
        actions.addStretch(1)
        right = QtWidgets.QVBoxLayout()
        right.addLayout(form)
        right.addLayout(actions)
        right.addWidget(self.result)
        right.addStretch(1)
        from .local_judge import LocalJudgeOffer

        self.local_judge = LocalJudgeOffer(ctx)
        self.local_judge.registered.connect(self._registered)
        right.addWidget(self.local_judge)
        left = QtWidgets.QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        left.addLayout(row)
        layout = QtWidgets.QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(right, 1)
        self.list.currentTextChanged.connect(self._show)
        self.add_button.clicked.connect(self._new)
        self.remove_button.clicked.connect(self._remove)
        self.save_button.clicked.connect(self.save)
        self.test_button.clicked.connect(self.test)
        self.kind.currentTextChanged.connect(lambda kind: self.api_version.setEnabled(get_provider(kind).api_version))
        self.api_version.setEnabled(get_provider(self.kind.currentText()).api_version)
        self.reload()

    def _registered(self, name: str) -> None:
        """A local judge just added: shown selected, and the change told."""
        self.reload(select=name)
        self.changed.emit()

    def reload(self, select: str | None = None) -> None:
        self.list.clear()
        #: the list's text of each broken row (a teammate's write that does not validate): shown
        #: marked, its sentence on selection; Remove deletes it
        self.broken: dict[str, BrokenRow] = {}
        for entry in self.repo.listing():
            if isinstance(entry, BrokenRow):
                shown = f"{entry.ident} (broken)"
                self.broken[shown] = entry
                self.list.addItem(shown)
                self.list.item(self.list.count() - 1).setToolTip(entry.sentence())
            else:
                self.list.addItem(entry.name)
        items = self.list.findItems(select, Qt.MatchFlag.MatchExactly) if select else []
        if items:
            self.list.setCurrentItem(items[0])
        elif self.list.count():
            self.list.setCurrentRow(0)
        else:
            self._new()

    def _new(self) -> None:
        self.list.clearSelection()
        for edit in (self.name, self.base_url, self.model, self.api_key, self.api_key_env, self.price_input,
                     self.price_output, self.price_cached_input, self.api_version, self.proxy,
                     self.ca_bundle):
            edit.clear()
        self.name.setReadOnly(False)
        self.result.setText("A new endpoint: fill in the fields and press Save.")
        self.name.setFocus()

    def _show(self, name: str) -> None:
        if not name:
            return
        from studio.core.errors import StudioError

        if name in self.broken:
            self._new()
            self.name.setText(self.broken[name].ident)
            self.result.setText(self.broken[name].sentence())
            return
        try:
            config = self.repo.get(name)
        except StudioError as exc:  # a row that does not read: say why (remove or replace it)
            self.result.setText(describe_error(exc))
            return
        self.name.setText(config.name)
        self.kind.setCurrentText(config.kind)
        self.base_url.setText(config.base_url)
        self.model.setText(config.model)
        self.api_key.clear()
        from studio.core.judges.http.credentials import get_keyring_key

        self.api_key.setPlaceholderText("a key is stored in the keyring (type to replace)" if get_keyring_key(name)
                                        else "stored in the OS keyring, never in the library")
        self.api_key_env.setText(config.api_key_env or "")
        self.api_version.setText(config.api_version or "")
        self.proxy.setText(config.proxy or "")
        self.ca_bundle.setText(config.ca_bundle or "")
        self.concurrency.setValue(config.max_concurrency)
        self.timeout.setValue(config.timeout)
        self.price_input.setText("" if config.price_input is None else str(config.price_input))
        self.price_output.setText("" if config.price_output is None else str(config.price_output))
        self.price_cached_input.setText("" if config.price_cached_input is None else str(config.price_cached_input))
        self.result.setText(config.label)

    def config(self) -> EndpointConfig:
        from studio.core.engine.budget import parse_money
        from studio.core.models.endpoints import EndpointConfig

        name = self.name.text().strip()
        try:
            base = self.repo.get(name).model_dump()
        except Exception:
            base = {}
        base.update(name=name, kind=self.kind.currentText(), base_url=self.base_url.text().strip(),
                    model=self.model.text().strip(), api_key_env=self.api_key_env.text().strip() or None,
                    max_concurrency=self.concurrency.value(), timeout=self.timeout.value(),
                    api_version=self.api_version.text().strip() or None,
                    proxy=self.proxy.text().strip() or None,
                    ca_bundle=self.ca_bundle.text().strip() or None)
        for field, edit, label in (("price_input", self.price_input, "The input price"),
                                   ("price_output", self.price_output, "The output price"),
                                   ("price_cached_input", self.price_cached_input, "The cached input price")):
            text = edit.text().strip()
            base[field] = parse_money(text, label) if text else None  # one sentence when malformed
        return EndpointConfig.model_validate(base)

    def _pick_ca_bundle(self) -> None:
        path = open_file(
            self, "CA bundle (PEM)", "", "Certificates (*.pem *.crt *.cer);;All files (*)")
        if path:
            self.ca_bundle.setText(path)

    def save(self) -> bool:
        try:
            config = self.config()
            if config.ca_bundle:
                from studio.core.judges.http.tls import ssl_context

                ssl_context(config.ca_bundle)  # a file that is not PEM is said now, not at a run
            key = self.api_key.text()
            if key:
                from studio.core.judges.http.credentials import set_keyring_key

                set_keyring_key(config.name, key)
            approve = self._approves(config)
            self.repo.save(config)
            if approve:
                self.repo.approve(config)
        except Exception as exc:
            self.messages.error("Cannot save the endpoint", exc)
            return False
        self.api_key.clear()
        self.reload(select=config.name)
        self.result.setText(f"Saved {config.name}." + (" The key is in the OS keyring." if key else ""))
        self.ctx.endpoints_changed.emit()
        self.changed.emit()
        return True

    def _stored(self, name: str) -> EndpointConfig | None:
        """The library's row of ``name`` (None: a new endpoint, or a row that does not read)."""
        from studio.core.errors import StudioError

        try:
            return self.repo.get(name) if name in self.repo.names() else None
        except StudioError:
            return None

    def _approves(self, config: EndpointConfig) -> bool:
        """Saving approves what the user typed (their own settings), but not a teammate's change
        the user merely saved over without touching where the key goes: that one still asks."""
        from studio.core.store.endpoint_trust import destination, pending

        stored = self._stored(config.name)
        if stored is None or pending(stored) is None:
            return True
        return destination(stored) != destination(config)

    def _as_stored(self, config: EndpointConfig) -> EndpointConfig:
        """The form's config, marked as the library's row when it sends the key where the row does
        (so a Test of a teammate's endpoint asks first, as a run does); a destination the user
        typed is their own."""
        from studio.core.store.endpoint_trust import destination

        stored = self._stored(config.name)
        if stored is not None and stored.origin is not None and destination(stored) == destination(config):
            return config.from_library(stored.origin)
        return config

    def _remove(self) -> None:
        item = self.list.currentItem()
        if item is None or not self.messages.confirm("Remove endpoint", f"Remove endpoint “{item.text()}” and its stored key?", "Remove"):
            return
        try:
            self.repo.remove(self.broken[item.text()].handle if item.text() in self.broken else item.text())
        except Exception as exc:
            self.messages.error("Cannot remove the endpoint", exc)
            return
        self.reload()
        self.ctx.endpoints_changed.emit()

    def test(self) -> None:
        try:
            config = self._as_stored(self.config())
        except Exception as exc:
            self.result.setText(describe_error(exc))
            return
        key = self.api_key.text() or None
        self.test_button.setEnabled(False)
        self.result.setText(f"Testing {config.base_url}…")

        def done(result: tuple[float, bool, str, list[str]]) -> None:
            self.test_button.setEnabled(True)
            latency, logprobs, text, notes = result
            self.result.setText(f"✓ Answered in {latency:.0f} ms; logprobs {'supported' if logprobs else 'not supported'}."
                                f"  Reply: “{reply_excerpt(text)}”\n" + "\n".join(notes))
            if config.name in self.repo.names():  # the concurrency the probe chose, if it chose one
                self.concurrency.setValue(self.repo.get(config.name).max_concurrency)
            self.result.setToolTip(text)

        def failed(exc: BaseException) -> None:
            from .endpoint_trust import approved_now

            self.test_button.setEnabled(True)
            self.result.setText(f"✗ {describe_error(exc)}")
            if approved_now(self.messages.approve_endpoint, exc):
                self.test()  # approved: now the key may go there

        self.ctx.tasks.run(lambda: probe(config, key, self.repo), done, failed)


class SettingsDialog(QtWidgets.QDialog):
    theme_changed = Signal(str)

    def __init__(self, ctx: AppContext, messages: Messages, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.ctx = ctx
        tabs = QtWidgets.QTabWidget()
        self.endpoints = EndpointsPage(ctx, messages)
        tabs.addTab(self.endpoints, "Endpoints")
        appearance = QtWidgets.QWidget()
        self.theme = QtWidgets.QComboBox()
        self.theme.addItem("Light", "light")
        self.theme.addItem("Dark", "dark")
        current = str(ctx.settings.value("ui/theme", "light"))
        self.theme.setCurrentIndex(max(0, self.theme.findData(current)))
        QtWidgets.QFormLayout(appearance).addRow("Theme", self.theme)
        tabs.addTab(appearance, "Appearance")
        tabs.addTab(self._sandbox_page(), "Sandbox")
        close = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(close)
        self.theme.currentIndexChanged.connect(self._theme)
        self.resize(760, 460)

    def _sandbox_page(self) -> QtWidgets.QWidget:
        """The opt-in for running function/bash graders without bubblewrap, and what it costs."""
        from studio.core.sandbox.launch import detect_mode

        page = QtWidgets.QWidget()
        self.allow_unsandboxed = QtWidgets.QCheckBox("Allow unsandboxed graders (weaker isolation)")
        value = str(self.ctx.settings.value("sandbox/allow_unsandboxed", "false")).lower() == "true"
        self.allow_unsandboxed.setChecked(value)
        mode = detect_mode()
        note = QtWidgets.QLabel(
            f"Isolation here: {mode}. " + (
                "Function and bash graders run under bubblewrap." if mode == "bubblewrap" else
                "Warning: bubblewrap is not available. Without this setting function and bash graders are "
                "refused; with it they run in a weaker sandbox, and every run says so. Only allow graders "
                "you trust."))
        note.setWordWrap(True)
        layout = QtWidgets.QVBoxLayout(page)
        layout.addWidget(self.allow_unsandboxed)
        layout.addWidget(note)
        layout.addStretch(1)
        def toggled(on: bool) -> None:
            self.ctx.settings.setValue("sandbox/allow_unsandboxed", "true" if on else "false")
            self.ctx.apply_sandbox_setting()

        self.allow_unsandboxed.toggled.connect(toggled)
        return page

    def _theme(self, _index: int) -> None:
        value = self.theme.currentData()
        self.ctx.settings.setValue("ui/theme", value)
        self.theme_changed.emit(value)
