"""What a component process imports before it works: `mockkube scheduler` (one per
`mockkube serve`, one per pytest-xdist worker) reaches the API over HTTP, so building the
command line and its start must not import the SQL store (SQLAlchemy: ~100 ms of CPU) nor
PyYAML, and every other `mockkube` command's parser must not import a driver."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from mockkube.client import kubeconfigs

NOT_IMPORTED = ("sqlalchemy", "mockkube.storage.store", "mockkube.apiserver.rest", "yaml", "mockkube.drivers")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_scheduler_process_imports_no_sql_store_yaml_or_driver():
    loaded = _modules_after(
        """
        from mockkube.cli.main import build_parser
        build_parser()  # every command's flags, as `mockkube scheduler` builds them
        import mockkube.server.schedulermain, mockkube.scheduler.scheduler, mockkube.client.replica
        """
    )
    assert "mockkube.client.remote" in loaded  # the check sees what was imported
    assert sorted(m for m in loaded if m.split(".")[0] in NOT_IMPORTED or m in NOT_IMPORTED) == []


def test_a_json_kubeconfig_is_read_without_pyyaml(tmp_path):
    cfg = {
        "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:1/"}}],
        "users": [{"name": "u", "user": {"token": "t0"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    (tmp_path / "json").write_text(json.dumps(cfg))
    (tmp_path / "yaml").write_text(
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1/'}}]\n"
        "users: [{name: u, user: {token: t0}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "current-context: x\n"
    )
    for name in ("json", "yaml"):
        creds = kubeconfigs.load(tmp_path / name)
        assert (creds.server, creds.headers) == ("http://127.0.0.1:1", {"Authorization": "Bearer t0"})


def test_serve_builds_its_own_command_line_alone_and_parses_it_as_the_whole_one():
    loaded = _modules_after(
        """
        from mockkube.cli.main import build_parser
        build_parser("serve")  # what `mockkube serve ...` builds
        """
    )
    others = ("mockkube.cli.cluster", "mockkube.cli.control", "mockkube.cli.scheduler", "mockkube.cli.kubelets")
    assert "mockkube.cli.main" in loaded and sorted(set(others) & loaded) == []
    from mockkube.cli.main import build_parser

    line = ["serve", "--port", "0", "--api-servers", "2", "--feature-gates", "DRAPartitionableDevices=true"]
    alone, whole = build_parser("serve").parse_args(line), build_parser().parse_args(line)
    assert vars(alone) == vars(whole)
