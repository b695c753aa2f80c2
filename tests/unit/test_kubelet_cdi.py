"""CDI spec files as the process runtime applies them to a container (runtime/cdi.py)."""

from __future__ import annotations

import json

from mockkube.kubelet.runtime import cdi


def test_edits_of_the_named_devices_from_json_and_yaml_specs(tmp_path):
    (tmp_path / "gpu-claim1.json").write_text(
        json.dumps(
            {
                "cdiVersion": "0.6.0",
                "kind": "gpu.example.com/gpu",
                "containerEdits": {"env": ["VENDOR=example"]},
                "devices": [
                    {"name": "gpu-0", "containerEdits": {"env": ["GPU_DEVICE_0=gpu-0"]}},
                    {"name": "gpu-1", "containerEdits": {"env": ["GPU_DEVICE_1=gpu-1"]}},
                ],
            }
        )
    )
    (tmp_path / "nic.yaml").write_text(
        "cdiVersion: 0.6.0\nkind: nic.example.com/nic\ndevices:\n- name: eth1\n  containerEdits:\n"
        "    mounts: [{hostPath: /etc/hostname, containerPath: /nic/name, options: [ro, bind]}]\n"
    )
    (tmp_path / "broken.json").write_text("{")
    got = cdi.edits(
        [str(tmp_path), str(tmp_path / "missing")], ["gpu.example.com/gpu=gpu-1", "nic.example.com/nic=eth1"]
    )
    assert got.env == {"VENDOR": "example", "GPU_DEVICE_1": "gpu-1"}
    assert got.mounts == [("/etc/hostname", "/nic/name", True)]
    assert got.missing == []
    assert cdi.edits([str(tmp_path)], ["gpu.example.com/gpu=gpu-9"]).missing == ["gpu.example.com/gpu=gpu-9"]
    assert cdi.edits([str(tmp_path)], []).env == {}
