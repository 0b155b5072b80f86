"""The built bundle, run the way a user runs it, against the pip-installed app (``packaging/smoke``).

The release tarball is checked against its checksum and unpacked into a fresh directory. Every
command of the bundle then runs with ``PATH`` holding no Python, ``PYTHONPATH``/``PYTHONHOME`` unset
and a fresh ``HOME``; as root (or wherever ``unshare`` may make a mount namespace) every Python of
the machine is hidden as well: the interpreters in /usr/bin and /usr/local/bin, their libraries,
pyenv, the build's virtualenv and this checkout. The same steps run on the pip-installed app
(``.venv/bin/grader-studio``) and the results must be equal:

version, the window's first paint (a screenshot; start-up within 20% of the pip app's), ``demo``,
every demo function grader over its demo dataset (per-sample scores), the standard library a grader
may import, judge runs against the scripted judge server, a judge endpoint over TLS (the bundle's
OpenSSL, certifi's CA bundle and an endpoint's own CA), an export of the demo library to every
platform, hostile graders (reading /etc/shadow, forking, allocating 4 GB, with and without the
audit hook), the sandbox's protections, the refusal without bubblewrap and the opt-in fallback,
and the sentence shown for an extra the bundle leaves out (Ray). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import ipaddress
import json
import os
import re
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import worker_modules  # noqa: E402

#: (grader, dataset): every function grader of the demo library (and the composite holding one,
#: and a bash grader) on the dataset it is written for
FUNCTION_RUNS = [
    ("qa-exact-match", "qa"), ("qa-keyword-coverage", "qa"), ("qa-token-f1-mka1", "qa"),
    ("qa-concise-promptfoo", "qa"), ("sentiment-macro-f1", "qa"), ("json-required-keys", "json-outputs"),
    ("contact-fields-letta", "json-outputs"), ("json-strict-gate", "json-outputs"), ("answer-not-empty", "qa"),
]
JUDGE_RUNS = [("qa-correctness-judge", "qa"), ("answer-quality-1to5", "qa"), ("rag-faithfulness", "rag")]
TARGETS = ["adaptive", "hud", "inspect", "letta", "mka1", "openai", "promptfoo"]
DEMO_JUDGE_PORT = 8765
BYPASS = (REPO / "tests" / "hostile" / "audit_hook_bypass.py").read_text()
HOSTILE = {
    "hostile-shadow": 'async def grade(thread):\n    with open("/etc/shadow") as fh:\n        return float(len(fh.read()))\n',
    "hostile-fork": "import os\n\nasync def grade(thread):\n    return float(os.fork())\n",
    "hostile-fork-no-hook": BYPASS + "\nimport os\n\nasync def grade(thread):\n    _disable_audit_hooks()\n"
                            "    return float(os.fork())\n",
    "hostile-4gb": "async def grade(thread):\n    return float(len(bytearray(4 * 1024 ** 3)))\n",
    "hostile-4gb-no-hook": BYPASS + "\nasync def grade(thread):\n    _disable_audit_hooks()\n"
                           "    return float(len(bytearray(4 * 1024 ** 3)))\n",
}
#: what each hostile grader must end in (besides being equal to the pip app's outcome)
CONTAINED = {
    "hostile-shadow": "No such file or directory: '/etc/shadow'",
    "hostile-fork": "os.fork is not allowed",
    "hostile-fork-no-hook": "Operation not permitted",
    "hostile-4gb": "memory limit",
    "hostile-4gb-no-hook": "memory limit",
}
#: the steps after --version and demo, in order (``--only`` picks some)
STEPS = ["window", "sandbox-info", "function-graders", "stdlib", "judges", "tls", "exports", "hostile", "fallback", "extras"]
#: imported by the parity grader? not these: they act on import (print, open a browser)
NOT_IMPORTED = {"this", "antigravity", "__main__"}


class Smoke:
    def __init__(self, bundle_dir: Path, pip_exe: Path, work: Path, hide_python: bool) -> None:
        self.bundle = bundle_dir / "grader-studio"
        self.pip = pip_exe
        self.work = work
        self.failures: list[str] = []
        self.passed = 0
        self.hide = hide_python and _can_unshare()
        self.nopython = _path_without(work / "path-no-python", lambda n: re.match(r"(python|pip|pydoc|idle)", n))
        self.nobwrap = _path_without(work / "path-no-bwrap", lambda n: n == "bwrap" or re.match(r"(python|pip)", n))
        self.masks = _python_locations() if self.hide else []

    # -- running the two apps -------------------------------------------------------------------
    def env(self, which: str, db: Path, **extra: str) -> dict[str, str]:
        home = self.work / f"home-{which}"
        home.mkdir(exist_ok=True)
        if which == "bundle":
            base = {"PATH": self.nopython, "HOME": str(home), "LANG": "C.UTF-8"}
        else:
            base = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"HOME": str(home)}
        base |= {"GRADER_STUDIO_DB": str(db), "QT_QPA_PLATFORM": "offscreen",
                 "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
        return base | extra

    def argv(self, which: str, args: list[str]) -> list[str]:
        if which == "pip":
            return [str(self.pip), *args]
        command = [str(self.bundle), *args]
        if not self.masks:
            return command
        script = "set -e\n" + "".join(
            f'mount --bind /dev/null "{p}"\n' if os.path.isfile(p) else f'mount -t tmpfs -o ro,size=4k tmpfs "{p}"\n'
            for p in self.masks) + 'exec "$@"\n'
        return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "hide-python", *command]

    def run(self, which: str, db: Path, *args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(which, list(args)), env=env or self.env(which, db), text=True,
                              capture_output=True, timeout=timeout, cwd=self.work)

    def both(self, name: str, *args: str, ok: bool = True) -> tuple[subprocess.CompletedProcess[str], ...]:
        out = tuple(self.run(which, self.db[which], *args) for which in ("pip", "bundle"))
        if ok:
            for which, result in zip(("pip", "bundle"), out, strict=True):
                if result.returncode != 0:
                    self.fail(f"{name}: the {which} app exited {result.returncode}: {_tail(result)}")
        return out

    def fail(self, message: str) -> None:
        self.failures.append(message)
        print(f"  FAIL {message}", flush=True)

    def check(self, name: str, condition: bool, detail: str = "") -> bool:
        if condition:
            self.passed += 1
            print(f"  ok   {name}", flush=True)
        else:
            self.fail(f"{name}{': ' + detail if detail else ''}")
        return condition

    # -- the steps -----------------------------------------------------------------------------
    def no_python(self) -> None:
        probe = "for p in python3 python; do if command -v $p; then exit 1; fi; done; " + \
            "".join(f'if "{p}" -c pass 2>/dev/null; then echo "{p} runs"; exit 1; fi; '
                    for p in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable) if os.path.exists(p)) + \
            ("" if not self.masks else "exit 0")
        argv = self.argv("bundle", [])[:-1] + ["/bin/sh", "-c", probe] if self.masks else ["/bin/sh", "-c", probe]
        env = {"PATH": self.nopython}
        result = subprocess.run(argv, env=env, text=True, capture_output=True)
        where = "PATH holds no Python" + (", every Python of the machine hidden" if self.masks else
                                          " (run as root to hide the machine's Pythons too)")
        if self.masks:
            self.check(f"no Python for the bundle: {where}", result.returncode == 0, result.stdout + result.stderr)
        else:
            self.check(f"no Python for the bundle: {where}", "python" not in result.stdout)

    def version(self) -> None:
        pip, bundle = self.both("--version", "--version")
        self.check(f"--version: {bundle.stdout.strip()}", pip.stdout == bundle.stdout and bundle.stdout.startswith(
            "grader-studio "), f"pip {pip.stdout!r} bundle {bundle.stdout!r}")

    def window(self, repeat: int) -> dict[str, float]:
        shot = self.work / "first-paint.png"
        result = self.run("bundle", self.db["bundle"], env=self.env("bundle", self.db["bundle"],
                                                                     GRADER_STUDIO_FIRST_PAINT=str(shot)))
        data = shot.read_bytes() if shot.exists() else b""
        self.check(f"window opens offscreen, screenshot {shot} ({len(data) // 1024} KiB)",
                   result.returncode == 0 and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, _tail(result))
        walls: dict[str, list[float]] = {"pip": [], "bundle": []}
        cpus: dict[str, list[float]] = {"pip": [], "bundle": []}
        for _ in range(repeat):  # interleaved, so a busy moment of the machine hits both
            for which in ("pip", "bundle"):
                png = self.work / f"paint-{which}.png"
                env = self.env(which, self.db[which], GRADER_STUDIO_FIRST_PAINT=str(png))
                started = time.perf_counter()
                proc = subprocess.Popen(self.argv(which, []), env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, cwd=self.work)
                _, status, usage = os.wait4(proc.pid, 0)
                walls[which].append(time.perf_counter() - started)
                cpus[which].append(usage.ru_utime + usage.ru_stime)
                if status != 0:
                    self.fail(f"first paint: the {which} app exited with status {status}")
        figures = {f"{k}_{which}": statistics.median(v[which]) for k, v in (("wall", walls), ("cpu", cpus))
                   for which in ("pip", "bundle")}
        ratio = figures["wall_bundle"] / figures["wall_pip"]
        cpu_ratio = figures["cpu_bundle"] / figures["cpu_pip"]
        # slower by over 20% in both measures: on a machine other work shares, a busy moment can
        # stretch one app's wall time, the CPU time the start-up costs stays put (bench/startup.py)
        self.check(f"first paint, median of {repeat}: bundle {figures['wall_bundle']:.2f} s "
                   f"(CPU {figures['cpu_bundle']:.2f} s), pip {figures['wall_pip']:.2f} s "
                   f"(CPU {figures['cpu_pip']:.2f} s): {ratio:.2f}x (CPU {cpu_ratio:.2f}x)",
                   ratio <= 1.2 or cpu_ratio <= 1.2, "slower than the pip app by over 20%")
        return figures

    def demo(self) -> None:
        pip, bundle = self.both("demo", "demo")
        # each app names the demo's files where it keeps them (its package, or the bundle's _internal)
        def report(which: str, text: str) -> str:
            return re.sub(r"\S*/resources/demo/", "DEMO/", text.replace(str(self.db[which]), "DB"))

        same = report("pip", pip.stdout) == report("bundle", bundle.stdout)
        self.check("demo: the same library report", same, f"pip {pip.stdout!r}\nbundle {bundle.stdout!r}")

    def share_html(self) -> None:
        """The demo's judge run shared as one HTML page (the viewer's code is package data: a bundle
        without it cannot write the page): the same page from both apps over one library (each demo's
        judge run took its own times), but for when it was written."""
        pages = {}
        for which in ("pip", "bundle"):
            out = self.work / f"{which}-run.html"
            result = self.run(which, self.db["pip"], "runs", "export", "1", "--format", "html", "-o", str(out))
            if result.returncode != 0 or not out.is_file():
                self.fail(f"share as HTML: the {which} app exited {result.returncode}: {_tail(result)}")
                return
            text = out.read_text(encoding="utf-8")
            pages[which] = re.sub(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?( UTC)?", "WHEN", text)
        self.check(f"share as HTML: run 1's page, {len(pages['pip']):,} characters, the same from both apps",
                   pages["pip"] == pages["bundle"], "the pages differ")

    def compare_run(self, name: str, grader: str, dataset: str, *extra: str, path: str | None = None,
                    expect: Callable[[list[dict[str, object]]], str | None] | None = None) -> None:
        rows = {}
        for which in ("pip", "bundle"):
            env = self.env(which, self.db[which], **({"PATH": path} if path else {}))
            result = self.run(which, self.db[which], "run", grader, dataset, "--keep-going", *extra, env=env)
            match = re.search(r"^run (\d+):", result.stdout, re.M)
            if match is None:
                self.fail(f"{name}: the {which} app did not run: {_tail(result)}")
                return
            exported = self.run(which, self.db[which], "runs", "export", match.group(1), "--format", "jsonl")
            rows[which] = [_timeless(json.loads(line)) for line in exported.stdout.splitlines()]
        differ = [(a, b) for a, b in zip(rows["pip"], rows["bundle"], strict=False) if a != b]
        ok = len(rows["pip"]) == len(rows["bundle"]) > 0 and not differ
        detail = f"{len(differ)} samples differ, first: pip {differ[0][0]}\n bundle {differ[0][1]}" if differ else \
            f"{len(rows['pip'])} vs {len(rows['bundle'])} rows"
        scores = [r["score"] for r in rows["bundle"]]
        mean = statistics.mean(s for s in scores if isinstance(s, int | float)) if any(
            isinstance(s, int | float) for s in scores) else None
        summary = f"{len(scores)} samples, mean {mean:.4f}" if mean is not None else \
            f"{len(scores)} samples, {rows['bundle'][0]['status'] if rows['bundle'] else '-'}"
        if self.check(f"{name}: {grader} on {dataset}, {summary}, equal to the pip app's", ok, detail) and expect:
            problem = expect(rows["bundle"])
            if problem:
                self.fail(f"{name}: {grader}: {problem}")

    def function_graders(self) -> None:
        for grader, dataset in FUNCTION_RUNS:
            self.compare_run("sandboxed grader", grader, dataset,
                             expect=lambda rows: None if all(r["status"] == "ok" for r in rows) else
                             f"not every sample ok: {[r['error'] for r in rows if r['status'] != 'ok'][:2]}")

    def stdlib(self) -> None:
        names = sorted(n for n in set(worker_modules.stdlib_modules()) - NOT_IMPORTED if not n.endswith(".__main__"))
        # promptfoo's contract carries a reason: the modules that did not import (the same ones in
        # both apps: modules of other platforms such as asyncio.windows_events)
        source = ("import importlib\n\nNAMES = " + json.dumps(names) + "\n\n\ndef get_assert(output, context):\n"
                  "    failed = []\n    for name in NAMES:\n        try:\n            importlib.import_module(name)\n"
                  "        except BaseException as exc:\n"
                  "            failed.append(f'{name}: {type(exc).__name__}')\n"
                  "    return {'pass': True, 'score': float(len(NAMES) - len(failed)),\n"
                  "            'reason': f'{len(failed)} not importable: ' + '; '.join(failed)}\n")
        path = self.work / "stdlib_imports.py"
        path.write_text(source)
        self.both("stdlib grader", "graders", "create", str(path), "--key", "smoke-stdlib-imports")
        self.hostile_dataset()
        self.compare_run(f"standard library in the sandbox (score: how many of {len(names)} modules import)",
                         "smoke-stdlib-imports", "smoke-one")

    def hostile_dataset(self) -> None:
        if getattr(self, "_one", False):
            return
        path = self.work / "one.jsonl"
        path.write_text(json.dumps({"id": "h1", "messages": [{"role": "user", "content": "q"}],
                                    "completion": "a", "metadata": {"expected": "a"}}) + "\n")
        self.both("smoke dataset", "datasets", "import", str(path), "--name", "smoke-one")
        self._one = True

    def judges(self) -> None:
        servers = {}
        for which in ("pip", "bundle"):  # each app's own scripted judge, in turn (the same port)
            env = self.env(which, self.db[which])
            servers[which] = subprocess.Popen(self.argv(which, ["fake-judge", "--port", str(DEMO_JUDGE_PORT)]),
                                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                              text=True, cwd=self.work)
            try:
                if not _wait_port(DEMO_JUDGE_PORT, 60):
                    self.fail(f"judge: the {which} app's fake-judge did not listen on {DEMO_JUDGE_PORT}")
                    return
                self.judge_rows[which] = {}
                for grader, dataset in JUDGE_RUNS:
                    result = self.run(which, self.db[which], "run", grader, dataset, "--no-cache", "--keep-going")
                    match = re.search(r"^run (\d+):", result.stdout, re.M)
                    if match is None:
                        self.fail(f"judge run {grader}: the {which} app did not run: {_tail(result)}")
                        continue
                    exported = self.run(which, self.db[which], "runs", "export", match.group(1), "--format", "jsonl")
                    self.judge_rows[which][grader] = [_timeless(json.loads(line))
                                                      for line in exported.stdout.splitlines()]
            finally:
                servers[which].terminate()
                servers[which].wait(30)
                _wait_port_closed(DEMO_JUDGE_PORT, 30)
        for grader, dataset in JUDGE_RUNS:
            pip, bundle = self.judge_rows["pip"].get(grader), self.judge_rows["bundle"].get(grader)
            ok = bool(pip) and pip == bundle and all(r["status"] == "ok" for r in bundle or [])
            scores = [r["score"] for r in bundle or [] if isinstance(r["score"], int | float)]
            self.check(f"judge run against the bundle's scripted judge: {grader} on {dataset}, "
                       f"{len(scores)} scores, mean {statistics.mean(scores) if scores else float('nan'):.4f}, "
                       "equal to the pip app's", ok, _first_difference(pip, bundle) if pip and bundle else "missing rows")

    def tls(self) -> None:
        """A judge endpoint over https, as a company's gateway is reached: the scripted judge behind a
        TLS relay whose certificate a private CA signs. With the CA given (``--ca-bundle``) the call
        must answer; without it certifi's bundle (the base store) must refuse the certificate by name.
        Both exercise what only the bundle can lose: its OpenSSL, the ssl module and certifi's file."""
        tls_dir = self.work / "tls"
        ca_file = _test_ca(tls_dir)
        judge = subprocess.Popen(self.argv("bundle", ["fake-judge", "--port", str(DEMO_JUDGE_PORT), "--no-reward"]),
                                 env=self.env("bundle", self.db["bundle"]), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, cwd=self.work)
        relay = _TlsRelay(tls_dir / "server.pem", tls_dir / "server.key", DEMO_JUDGE_PORT)
        try:
            if not _wait_port(DEMO_JUDGE_PORT, 60):
                self.fail(f"tls: the bundle's fake-judge did not listen on {DEMO_JUDGE_PORT}")
                return
            url = f"https://127.0.0.1:{relay.port}/v1"
            outcome: dict[str, list[tuple[int, str]]] = {}
            for which in ("pip", "bundle"):
                # the base store must be certifi's in both apps: none of the machine's settings
                env = {k: v for k, v in self.env(which, self.db[which]).items()
                       if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
                outcome[which] = []
                for name, extra in (("smoke-tls", ["--ca-bundle", str(ca_file)]), ("smoke-tls-untrusted", [])):
                    result = self.run(which, self.db[which], "endpoints", "add", name, "--replace", "--base-url",
                                      url, "--model", "fake-judge", *extra, env=env)
                    if result.returncode == 0:
                        result = self.run(which, self.db[which], "endpoints", "test", name, env=env)
                    text = re.sub(r"answered in \d+ ms", "answered", result.stdout + result.stderr)
                    outcome[which].append((result.returncode, text.replace(str(self.work), "WORK")))
        finally:
            relay.stop()
            judge.terminate()
            judge.wait(30)
            _wait_port_closed(DEMO_JUDGE_PORT, 30)
        (trusted_rc, trusted), (untrusted_rc, untrusted) = outcome["bundle"]
        self.check("judge endpoint over TLS with its own CA (--ca-bundle): answers, as in the pip app",
                   trusted_rc == 0 and "logprobs supported" in trusted and outcome["pip"][0] == outcome["bundle"][0],
                   _first_difference(outcome["pip"][0], outcome["bundle"][0]))
        self.check("judge endpoint over TLS without its CA: certifi's bundle refuses the certificate in one "
                   "sentence, as in the pip app",
                   untrusted_rc != 0 and "is not trusted" in untrusted and "Traceback" not in untrusted
                   and outcome["pip"][1] == outcome["bundle"][1],
                   _first_difference(outcome["pip"][1], outcome["bundle"][1]))

    def exports(self) -> None:
        for target in TARGETS:
            dirs = {which: self.work / f"export-{which}-{target}" for which in ("pip", "bundle")}
            results = {which: self.run(which, self.db[which], "export", "--all", "--to", target, "-o", str(d))
                       for which, d in dirs.items()}
            files = {which: _tree(d) for which, d in dirs.items()}
            same = files["pip"] == files["bundle"] and results["pip"].returncode == results["bundle"].returncode
            self.check(f"export --all --to {target}: {len(files['bundle'])} files, identical to the pip app's",
                       same and bool(files["bundle"]), _tail(results["bundle"]))

    def hostile(self) -> None:
        self.hostile_dataset()
        for key, source in HOSTILE.items():
            path = self.work / f"{key}.py"
            path.write_text(source)
            self.both(f"create {key}", "graders", "create", str(path), "--key", key)
            expected = CONTAINED[key]
            self.compare_run(f"hostile grader contained ({expected})", key, "smoke-one",
                             expect=lambda rows, expected=expected: None if rows and all(
                                 r["status"] != "ok" and expected in str(r["error"]) for r in rows)
                             else f"not contained as expected ({expected!r}): {[r['error'] for r in rows]}")

    def sandbox_info(self) -> None:
        pip, bundle = self.both("sandbox-info", "sandbox-info", "--json")
        try:
            a, b = json.loads(pip.stdout), json.loads(bundle.stdout)
        except json.JSONDecodeError:
            self.fail(f"sandbox-info --json: not JSON: {_tail(bundle)}")
            return
        keep = ("mode", "studio_is_root", "worker_uid")
        same = {k: a.get(k) for k in keep} == {k: b.get(k) for k in keep} and \
            [(p["name"], p["active"]) for p in a["protections"]] == [(p["name"], p["active"]) for p in b["protections"]]
        active = [p["name"] for p in b["protections"] if p["active"]]
        self.check(f"sandbox-info: mode {b.get('mode')}, active: {', '.join(active)}; as in the pip app", same,
                   f"pip {a}\nbundle {b}")

    def fallback(self) -> None:
        for which in ("pip", "bundle"):
            env = self.env(which, self.db[which], PATH=self.nobwrap)
            refused = self.run(which, self.db[which], "run", "qa-exact-match", "qa", env=env)
            self.check(f"without bubblewrap the {which} app refuses grader code",
                       refused.returncode == 2 and "bubblewrap is not available" in refused.stderr
                       and "Traceback" not in refused.stderr, _tail(refused))
        self.compare_run("opt-in fallback (bubblewrap hidden from both)", "qa-exact-match", "qa",
                         "--allow-unsandboxed", path=self.nobwrap)

    def extras(self) -> None:
        result = self.run("bundle", self.db["bundle"], "run", "qa-exact-match", "qa", "--executor", "ray")
        text = result.stderr + result.stdout
        self.check("Ray, left out of the bundle: one sentence naming the pip install",
                   result.returncode != 0 and "not part of the standalone app" in text
                   and "pip install 'grader-studio[ray]'" in text and "Traceback" not in text, _tail(result))
        result = self.run("bundle", self.db["bundle"], "local-judge")
        text = result.stderr + result.stdout
        self.check("llama.cpp's local judge, left out of the bundle: one sentence naming the pip install",
                   result.returncode == 1 and "the standalone app leaves llama.cpp out" in text
                   and "pip install 'grader-studio[local]'" in text and "Traceback" not in text, _tail(result))


#: what differs between two runs of the same app too: clock readings (every "..._ms" duration: a
#: sample's, a judge call's latency and queueing; the judge reply's "created"), the reply's "id" (the
#: scripted server numbers requests in arrival order, which concurrent calls shuffle), whether an
#: answer came from the cache, and the reply's "cached_tokens" (the scripted server counts a prompt's
#: first message as cached when the same one arrived before, which concurrent calls shuffle too)
_VOLATILE = frozenset({"created", "cached", "id", "cached_tokens"})


def _timeless(value: object) -> object:
    """A run's exported row without its clock readings, to compare the two apps' results."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in _VOLATILE and not k.endswith("_ms")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _first_difference(a: object, b: object, where: str = "") -> str:
    """Where two exported results first differ, as a path and both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where or 'value'}: pip {str(a)[:200]!r}, bundle {str(b)[:200]!r}"


def _test_ca(folder: Path) -> Path:
    """A private CA and a server certificate for 127.0.0.1 it signs (``server.pem``/``server.key``
    in ``folder``); returns the CA's PEM file. Made with cryptography, the app's own dependency."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "grader-studio smoke test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
              .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
              .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                             critical=False)
              .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
              .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "server.pem").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (folder / "server.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    return folder / "ca.pem"


class _TlsRelay:
    """TLS on 127.0.0.1 (a free port), each connection passed on in plain text to ``upstream``: the
    scripted judge as a gateway with a company's certificate serves it."""

    def __init__(self, cert: Path, key: Path, upstream: int) -> None:
        self.upstream = upstream
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # stop() closed the listener
            threading.Thread(target=self._relay, args=(raw,), daemon=True).start()

    def _relay(self, raw: socket.socket) -> None:
        try:
            client = self.context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()  # the untrusted case: the app refuses the certificate mid-handshake
            return
        upstream = socket.create_connection(("127.0.0.1", self.upstream))

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for sock in (src, dst):
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join(30)
        client.close()
        upstream.close()

    def stop(self) -> None:
        self.listener.close()


def _tail(result: subprocess.CompletedProcess[str]) -> str:
    return (result.stderr or result.stdout or "").strip()[-600:]


def _tree(root: Path) -> dict[str, str]:
    if not root.exists():
        return {}
    if root.is_file():
        return {root.name: hashlib.sha256(root.read_bytes()).hexdigest()}
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _wait_port(port: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.1)
    return False


def _wait_port_closed(port: int, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.1)


def _path_without(directory: Path, leave_out: Callable[[str], object]) -> str:
    """A PATH of one directory linking every program of the usual directories but ``leave_out``."""
    directory.mkdir(parents=True, exist_ok=True)
    for folder in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            link = directory / name
            if not leave_out(name) and not link.exists():
                link.symlink_to(os.path.join(folder, name))
    return str(directory)


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "--mount", "--", "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True).returncode == 0


def _python_locations() -> list[str]:
    """Every Python of this machine the bundle could reach: interpreters, their libraries, pyenv,
    the build's virtualenv (and its base), and this checkout."""
    found: list[str] = []
    for folder in ("/usr/bin", "/usr/local/bin", "/bin"):
        if os.path.isdir(folder) and not os.path.islink(folder):
            found += [os.path.join(folder, n) for n in sorted(os.listdir(folder))
                      if re.fullmatch(r"python[0-9.]*m?", n) and not os.path.islink(os.path.join(folder, n))]
    for folder in ("/usr/lib", "/usr/local/lib"):
        if os.path.isdir(folder):
            found += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if re.fullmatch(r"python[0-9.]+", n)]
    found += [sys.base_prefix, sys.prefix, str(REPO), os.path.expanduser("~/.pyenv")]
    unique = sorted({os.path.realpath(p) for p in found if os.path.exists(p)}, key=lambda p: (p.count("/"), p))
    outer: list[str] = []
    for path in unique:  # a folder inside one already hidden is hidden with it
        if not path.startswith(tempfile.gettempdir()) and not any(path.startswith(o + "/") for o in outer):
            outer.append(path)
    return outer


def unpack(tarball: Path, work: Path) -> Path:
    """The tarball checked against its .sha256 and unpacked; returns the app's folder."""
    sums = Path(str(tarball) + ".sha256").read_text().split()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if sums[0] != digest:
        raise SystemExit(f"error: {tarball.name}: checksum {digest} does not match {sums[0]}")
    with tarfile.open(tarball) as tar:
        tar.extractall(work / "app", filter="tar")
    (top,) = list((work / "app").iterdir())
    return top


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, help="release tarball (default: the newest in dist/)")
    parser.add_argument("--pip", type=Path, default=REPO / ".venv" / "bin" / "grader-studio",
                        help="the pip-installed app to compare with")
    parser.add_argument("--repeat", type=int, default=5, help="start-ups timed per app")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--results", type=Path, help="write the figures and checks here as JSON")
    parser.add_argument("--only", nargs="+", choices=STEPS, help="run only these steps (after version and demo)")
    args = parser.parse_args(argv)
    tarball = args.tarball or max((REPO / "dist").glob("grader-studio-*.tar.gz"), key=os.path.getmtime, default=None)
    if tarball is None:
        print("error: no dist/grader-studio-*.tar.gz: run packaging/build first", file=sys.stderr)
        return 2
    if not args.pip.exists():
        print(f"error: {args.pip}: no pip-installed app to compare with", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="grader-studio-smoke-"))
    os.chmod(work, 0o755)
    started = time.monotonic()
    try:
        bundle = unpack(tarball, work)
        smoke = Smoke(bundle, args.pip, work, hide_python=True)
        smoke.db = {which: work / f"{which}.sqlite" for which in ("pip", "bundle")}
        smoke.judge_rows = {}
        print(f"smoke test of {tarball.name} (checksum ok) unpacked in {bundle}", flush=True)
        smoke.no_python()
        smoke.version()
        smoke.demo()
        smoke.share_html()
        figures: dict[str, float] = {}
        for step in args.only or STEPS:
            if step == "window":
                figures = smoke.window(args.repeat)
            else:
                getattr(smoke, step.replace("-", "_"))()
        elapsed = time.monotonic() - started
        print(f"{'FAILED' if smoke.failures else 'passed'}: {smoke.passed} checks passed, "
              f"{len(smoke.failures)} difference(s), {elapsed:.0f} s")
        if args.results:
            args.results.write_text(json.dumps({"tarball": tarball.name, "seconds": round(elapsed), "checks": smoke.passed,
                                                "failures": smoke.failures, "first_paint": figures}, indent=2))
        return 1 if smoke.failures else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work directory kept: {work}")


if __name__ == "__main__":
    sys.exit(main())
