"""``grader-studio sandbox-info``: which protections the function-grader sandbox has here."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from studio.core.engine.executors import RAY_HINT, ray_available
from studio.core.engine.executors.placement import DRIVER_NOTE, cluster_note

from .app import COMMAND_HELP, CliApp, add_json_flag
from .parsers import Subparsers

if TYPE_CHECKING:
    from studio.core.sandbox.node import NodeInfo


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("sandbox-info", help=COMMAND_HELP["sandbox-info"])
    add_json_flag(parser)
    parser.set_defaults(func=sandbox_info_command)


def sandbox_info_command(args: argparse.Namespace, app: CliApp) -> int:
    from studio.core.sandbox import sandbox_info
    from studio.core.sandbox.node import node_info

    info = sandbox_info()
    node = node_info()
    if args.json:
        app.print_json({**info.model_dump(mode="json"), "node": node.model_dump(mode="json")})
        return 0
    print(f"platform: {info.platform}")
    print(f"isolation: {info.mode}" + (f" ({info.bwrap})" if info.bwrap and info.mode == "bubblewrap" else ""))
    uid = "unknown" if info.worker_uid is None else str(info.worker_uid)
    print(f"worker uid: {uid}" + (" (studio runs as root)" if info.studio_is_root else ""))
    print(f"namespaces fallback: {info.namespaces_fallback}")
    app.print_table(
        [["yes" if p.active else "NO", p.name, p.detail] for p in info.protections],
        ["active", "protection", "detail"],
    )
    for warning in info.warnings:
        print(f"warning: {warning}")
    _print_node(node)
    print(f"on a Ray cluster (run --executor ray): {cluster_note()}; {DRIVER_NOTE}"
          + ("" if ray_available() else f". {RAY_HINT}"))
    return 0 if info.protections else 1


def _print_node(node: NodeInfo) -> None:
    """The javascript graders' Node workers: which node, and the layers measured inside one."""
    if node.node is None:
        print(f"javascript graders: {node.problem}")
        return
    print(f"javascript graders: node {node.version} ({node.node})")
    if node.problem:
        print(f"warning: a Node worker does not start: {node.problem}")
        return
    print(f"  seccomp: {'yes' if node.seccomp else 'NO'} ({node.policy})")
    print(f"  no_new_privs: {'yes' if node.no_new_privs else 'NO'}; worker uid: {node.uid}")
    print(f"  landlock: {'yes (writes only to /tmp, execution only from system program directories)' if node.landlock else 'not available (kernel without Landlock)'}")
    print(f"  rlimits: {node.rlimits}")
