"""storage.k8s.io/v1 CSIStorageCapacities and VolumeAttributesClasses, networking.k8s.io/v1
ServiceCIDRs and IPAddresses over HTTP: validation as upstream's, kubectl's columns, the
default ServiceCIDR, and Services' ClusterIPs allocated from it with an IPAddress each."""

from __future__ import annotations

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
CAP = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"
VAC = "/apis/storage.k8s.io/v1/volumeattributesclasses"
CIDRS = "/apis/networking.k8s.io/v1/servicecidrs"
IPS = "/apis/networking.k8s.io/v1/ipaddresses"
SVCS = "/api/v1/namespaces/default/services"


async def test_csi_storage_capacity(api):
    cap = {"metadata": {"name": "c1"}, "storageClassName": "standard", "capacity": "10Gi", "nodeTopology": {}}
    st, out, _ = await api.post(CAP, cap)
    assert st == 201, out
    st, body, _ = await api.post(CAP, {"metadata": {"name": "c2"}, "storageClassName": "Bad_Name", "capacity": "-1"})
    assert st == 422
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueInvalid", "storageClassName"),
        ("FieldValueInvalid", "capacity"),
    ]
    out["storageClassName"] = "other"
    out["capacity"] = "5Gi"
    st, body, _ = await api.put(f"{CAP}/c1", out)
    assert st == 422 and body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "other": field is immutable',
            "field": "storageClassName",
        }
    ]
    st, tbl, _ = await api.get(CAP, headers=TABLE)
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "StorageClassName", "Capacity"]
    assert tbl["rows"][0]["cells"] == ["c1", "standard", "10Gi"]


async def test_volume_attributes_class(api):
    st, out, _ = await api.post(
        VAC, {"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "3000"}}
    )
    assert st == 201, out
    st, body, _ = await api.post(VAC, {"metadata": {"name": "empty"}, "driverName": "csi.example.com"})
    assert st == 422 and body["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must contain at least one key/value pair",
            "field": "parameters",
        }
    ]
    out["parameters"] = {"iops": "6000"}
    st, body, _ = await api.put(f"{VAC}/gold", out)
    assert st == 422 and "parameters: Forbidden: updates to parameters are forbidden." in body["message"]
    st, tbl, _ = await api.get(VAC, headers=TABLE)
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "DriverName", "Age"]
    assert tbl["rows"][0]["cells"][:2] == ["gold", "csi.example.com"]
    st, body, _ = await api.get("/apis/storage.k8s.io/v1")
    res = {r["name"]: r for r in body["resources"]}
    assert res["volumeattributesclasses"]["shortNames"] == ["vac"] and not res["volumeattributesclasses"]["namespaced"]
    assert res["csistoragecapacities"]["namespaced"] and "shortNames" not in res["csistoragecapacities"]


async def test_default_service_cidr_and_allocation(api):
    st, cidr, _ = await api.get(f"{CIDRS}/kubernetes")
    assert st == 200 and cidr["spec"]["cidrs"] == ["10.96.0.0/12"]
    [ready] = cidr["status"]["conditions"]
    assert (ready["type"], ready["status"], ready["message"]) == (
        "Ready",
        "True",
        "Kubernetes default Service CIDR is ready",
    )
    st, ip, _ = await api.get(f"{IPS}/10.96.0.1")
    assert st == 200 and ip["spec"]["parentRef"] == {
        "group": "",
        "resource": "services",
        "namespace": "default",
        "name": "kubernetes",
    }
    assert ip["metadata"]["labels"] == {
        "ipaddress.kubernetes.io/ip-family": "IPv4",
        "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
    }
    st, svc, _ = await api.post(SVCS, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})
    assert st == 201, svc
    vip = svc["spec"]["clusterIP"]
    st, ip, _ = await api.get(f"{IPS}/{vip}")
    assert st == 200 and ip["spec"]["parentRef"]["name"] == "web"
    st, body, _ = await api.post(
        SVCS, {"metadata": {"name": "dup"}, "spec": {"clusterIP": vip, "ports": [{"port": 80}]}}
    )
    assert st == 422 and body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": f'Invalid value: ["{vip}"]: failed to allocate IP {vip}: provided IP is already allocated',
            "field": "spec.clusterIPs",
        }
    ]
    st, body, _ = await api.post(
        SVCS, {"metadata": {"name": "far"}, "spec": {"clusterIP": "192.168.0.10", "ports": [{"port": 80}]}}
    )
    assert (
        st == 422
        and "the provided IP (192.168.0.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
        in (body["message"])
    )
    st, svc, _ = await api.post(
        SVCS, {"metadata": {"name": "fixed"}, "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 53}]}}
    )
    assert st == 201 and (await api.get(f"{IPS}/10.96.0.10"))[0] == 200
    assert (await api.delete(f"{SVCS}/web"))[0] == 200
    assert (await api.get(f"{IPS}/{vip}"))[0] == 404
    st, tbl, _ = await api.get(f"{IPS}/10.96.0.10", headers=TABLE)
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "ParentRef"]
    assert tbl["rows"][0]["cells"][:2] == ["10.96.0.10", "services/default/fixed"]
    st, tbl, _ = await api.get(CIDRS, headers=TABLE)
    assert [c["name"] for c in tbl["columnDefinitions"]] == ["Name", "CIDRs", "Age"]
    assert tbl["rows"][0]["cells"][:2] == ["kubernetes", "10.96.0.0/12"]
    # headless and ExternalName Services take no IP
    st, svc, _ = await api.post(
        SVCS, {"metadata": {"name": "headless"}, "spec": {"clusterIP": "None", "ports": [{"port": 80}]}}
    )
    assert st == 201 and svc["spec"]["clusterIP"] == "None"


async def test_service_cidr_and_ip_address_validation(api):
    st, body, _ = await api.post(
        CIDRS, {"metadata": {"name": "two"}, "spec": {"cidrs": ["10.0.0.0/24", "10.1.0.0/24"]}}
    )
    assert st == 422 and "may specify no more than one IP for each IP family" in body["message"]
    st, body, _ = await api.post(CIDRS, {"metadata": {"name": "bad"}, "spec": {"cidrs": ["10.0.0.0/33"]}})
    assert st == 422 and body["details"]["causes"][0]["field"] == "spec.cidrs[0]"
    st, out, _ = await api.post(CIDRS, {"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.100.0.0/24"]}})
    assert st == 201
    out["spec"]["cidrs"] = ["10.101.0.0/24"]
    st, body, _ = await api.put(f"{CIDRS}/extra", out)
    assert st == 422 and body["details"]["causes"][0]["field"] == "spec.cidrs[0]"
    out["spec"]["cidrs"] = ["10.100.0.0/24", "fd00::/108"]  # a second family may be added
    assert (await api.put(f"{CIDRS}/extra", out))[0] == 200
    st, body, _ = await api.post(
        IPS, {"metadata": {"name": "010.1.2.3"}, "spec": {"parentRef": {"resource": "services", "name": "x"}}}
    )
    assert st == 422 and body["details"]["causes"][0]["field"] == "metadata.name"
    st, body, _ = await api.post(
        IPS, {"metadata": {"name": "10.1.2.3"}, "spec": {"parentRef": {"resource": "", "name": "a/b"}}}
    )
    assert st == 422
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueRequired", "spec.parentRef.resource"),
        ("FieldValueInvalid", "spec.parentRef.name"),
    ]
    st, body, _ = await api.get("/apis/networking.k8s.io/v1")
    res = {r["name"]: r for r in body["resources"]}
    assert res["ipaddresses"]["shortNames"] == ["ip"] and "shortNames" not in res["servicecidrs"]
    assert "servicecidrs/status" in res


async def test_service_cidr_deletion_waits_for_its_addresses():
    """The servicecidrs controller: a finalizer and Ready on every ServiceCIDR; deleting one
    waits (Ready=False, Terminating) until no IPAddress depends on it alone."""
    import aiohttp

    from mockkube.testing.cluster import running_server
    from tests.api.conftest import Api

    async with running_server(components=True, cluster="nodes: []\ndeviceClasses: false\n") as server:
        async with aiohttp.ClientSession() as s:
            api = Api(s, server.url, server)
            assert (await api.post(CIDRS, {"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.200.0.0/24"]}}))[
                0
            ] == 201
            await server.settled()
            st, cidr, _ = await api.get(f"{CIDRS}/extra")
            assert cidr["metadata"]["finalizers"] == ["networking.k8s.io/service-cidr-finalizer"]
            assert [(c["type"], c["status"], c["message"]) for c in cidr["status"]["conditions"]] == [
                ("Ready", "True", "Kubernetes Service CIDR is ready")
            ]
            st, default, _ = await api.get(f"{CIDRS}/kubernetes")
            assert default["status"]["conditions"][0]["message"] == "Kubernetes default Service CIDR is ready"
            svc = {"metadata": {"name": "in-extra"}, "spec": {"clusterIP": "10.200.0.5", "ports": [{"port": 80}]}}
            assert (await api.post(SVCS, svc))[0] == 201
            assert (await api.delete(f"{CIDRS}/extra"))[0] == 202  # pending: the finalizer holds it
            await server.settled()
            st, cidr, _ = await api.get(f"{CIDRS}/extra")
            assert st == 200 and cidr["metadata"]["deletionTimestamp"]
            [cond] = cidr["status"]["conditions"]
            assert (cond["status"], cond["reason"]) == ("False", "Terminating")
            # no new IP comes from a ServiceCIDR being deleted
            st, body, _ = await api.post(
                SVCS, {"metadata": {"name": "late"}, "spec": {"clusterIP": "10.200.0.6", "ports": [{"port": 80}]}}
            )
            assert st == 422 and "is not in the valid range" in body["message"]
            assert (await api.delete(f"{SVCS}/in-extra"))[0] == 200
            await server.settled()
            assert (await api.get(f"{CIDRS}/extra"))[0] == 404
