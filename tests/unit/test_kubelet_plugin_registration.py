"""Registration checks of the kubelet's plugin watcher (pure parts)."""

from __future__ import annotations

import socket
from pathlib import Path

from mockkube.generated.pluginapi import reg_pb2
from mockkube.kubelet.manager import health_rule_name
from mockkube.kubelet.plugins import PluginWatcher, is_registration_socket


def test_only_unix_sockets_that_are_not_dot_files_count(tmp_path: Path):
    (tmp_path / "plain-reg.sock").write_text("")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "gpu.example.com-reg.sock"))
    h = socket.socket(socket.AF_UNIX)
    h.bind(str(tmp_path / ".hidden-reg.sock"))
    try:
        assert is_registration_socket(tmp_path / "gpu.example.com-reg.sock")
        assert not is_registration_socket(tmp_path / "plain-reg.sock")
        assert not is_registration_socket(tmp_path / ".hidden-reg.sock")
        assert not is_registration_socket(tmp_path / "missing")
    finally:
        s.close()
        h.close()


def test_validation_of_plugin_info(tmp_path: Path):
    w = PluginWatcher(tmp_path, hooks=None)  # type: ignore[arg-type]
    ok = reg_pb2.PluginInfo(
        type="DRAPlugin",
        name="gpu.example.com",
        endpoint="/x/dra.sock",
        supported_versions=["v9.DRAPlugin", "v1beta1.DRAPlugin"],
    )
    assert w._validate(ok) == ""
    assert "not supported" in w._validate(
        reg_pb2.PluginInfo(type="CSIPlugin", name="x", endpoint="/e", supported_versions=["v1.DRAPlugin"])
    )
    assert "none of the versions" in w._validate(
        reg_pb2.PluginInfo(type="DRAPlugin", name="x", endpoint="/e", supported_versions=["v2.DRAPlugin"])
    )


def test_health_rule_names_are_valid_and_distinct():
    a = health_rule_name("n1", "gpu.example.com", "n1", "gpu-0")
    b = health_rule_name("n2", "gpu.example.com", "n2", "gpu-0")
    assert a != b and len(a) < 64 and a == a.lower()
