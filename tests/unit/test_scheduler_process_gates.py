"""The scheduler process gets the cluster's feature gates (``mockkube scheduler
--feature-gates``, passed by ``mockkube serve``) and, with GenericWorkload on, follows
PodGroups; its own scheduler then runs the pod group cycle and GangScheduling."""

from __future__ import annotations

import asyncio

from mockkube.cli.main import build_parser
from mockkube.server.schedulermain import Host


def _host(*flags: str) -> Host:
    args = build_parser().parse_args(["scheduler", "--kubeconfig", "unused", *flags])
    return Host(args, None)  # type: ignore[arg-type]  # no request is made here


def test_gates_reach_the_scheduler_process():
    async def run():
        on = _host(
            "--feature-gates",
            "GenericWorkload=true,GangScheduling=true",
            "--runtime-config",
            "scheduling.k8s.io/v1alpha2=true",
        )
        off = _host()
        return on, off

    on, off = asyncio.run(run())
    assert on.feature_gates.enabled("GangScheduling") and not off.feature_gates.enabled("GenericWorkload")
    followed = {rt.plural for rt in on.store._rts.values()}
    assert "podgroups" in followed
    assert "podgroups" not in {rt.plural for rt in off.store._rts.values()}
