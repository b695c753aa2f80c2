"""Subresources with their own request kinds: pods/binding, pods/eviction, */scale,
namespaces/finalize. (status goes through the generic update/patch path.)"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING

from aiohttp import web

from mockkube.apiserver.http import params
from mockkube.apiserver.http.responses import json_response
from mockkube.apiserver.rest import PATCH_TYPES
from mockkube.machinery import errors
from mockkube.machinery import fielderrors as fe
from mockkube.storage.cache import Entry

# pods/log, pods/exec, pods/attach, pods/portforward and nodes/proxy reach the pod's node through this
# object (upstream's kubelet client), which the server puts here (mockkube/kubelet/streaming.py:
# NodeStreams): ``kubelet_of(node) -> endpoint | None`` (a kubelet reached over HTTP, else answered here),
# ``async forward(request, endpoint, path, query)``, ``pick_container(pod, name)``, ``async serve_log(...)``,
# ``async stream(request, pod, subresource)`` and ``async node_proxy(request, node, path)``.
# The API layer does not import the node simulation.
NODE_KEY: web.AppKey = web.AppKey("mockkube.node", object)

if TYPE_CHECKING:
    from mockkube.apiserver.http.handlers import API, Target


def _dumps(o) -> bytes:
    return json.dumps(o, separators=(",", ":")).encode()


async def handle(api: "API", request: web.Request, t: "Target") -> web.StreamResponse:
    m = request.method
    sub = t.sub
    if sub == "binding" and m == "POST":
        opts = params.write_options(request.query, request.headers.get("User-Agent"), "CreateOptions")
        body = await api._body(request)
        bind(api, t, body, opts.dry_run)
        return json_response(
            _dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}), 201
        )
    if sub == "token" and m == "POST" and t.rt.plural == "serviceaccounts":
        opts = params.write_options(request.query, request.headers.get("User-Agent"), "CreateOptions")
        body = await api._body(request)
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be an object")
        api.res.check_body(t.rt, body, opts, "TokenRequest", "authentication.k8s.io/v1")
        if api.auth.tokens is None:
            raise errors.service_unavailable("ServiceAccount tokens are not served")
        return json_response(_dumps(api.auth.tokens.request(t.namespace, t.name, body)), 201)
    if sub == "eviction" and m == "POST":
        params.write_options(request.query, request.headers.get("User-Agent"), "CreateOptions")  # validated
        body = await api._body(request)
        evict(api, t, body, request.query.getall("dryRun", []))
        return json_response(
            _dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}), 201
        )
    if sub == "scale":
        if m == "GET":
            return json_response(_dumps(scale_of(api, t)))
        if m in ("PUT", "PATCH"):
            opts = params.write_options(request.query, request.headers.get("User-Agent"), "UpdateOptions")
            if m == "PUT":
                body = await api._body(request)
            else:
                from mockkube.machinery import patch as jpatch
                from mockkube.machinery import strategic

                mt = request.headers.get("Content-Type", "").split(";")[0].strip()
                ptype = PATCH_TYPES.get(mt)
                if ptype is None or ptype == "apply":
                    raise errors.unsupported_media_type(mt, [k for k, v in PATCH_TYPES.items() if v != "apply"])
                pbody = await api._body(request, patch=True)
                cur = scale_of(api, t)
                if ptype == "json":
                    body = jpatch.apply_json_patch(cur, pbody)
                elif ptype == "merge":
                    body = jpatch.apply_merge_patch(cur, pbody)
                else:
                    from mockkube.machinery import schema

                    body = strategic.apply_strategic_merge_patch(
                        cur, pbody, schema.for_kind("autoscaling", "v1", "Scale")
                    )
            return json_response(_dumps(set_scale(api, t, body, opts)))
    if sub == "log" and m == "GET":
        return await pod_log(api, request, t)
    if sub in ("exec", "attach", "portforward") and m in ("GET", "POST"):
        pod = api.res.get(t.rt, t.namespace, t.name).obj
        node = _node(request)
        kubelet = node.kubelet_of((pod.get("spec") or {}).get("nodeName") or "")
        if kubelet is None:
            return await node.stream(request, pod, sub)
        # as upstream's ExecLocation, AttachLocation and PortForwardLocation: the kubelet's
        # path names the container, the options go as they came
        path = f"/{_KUBELET_PATHS[sub]}/{t.namespace}/{t.name}"
        if sub != "portforward":
            path += "/" + node.pick_container(pod, request.query.get("container", ""))
        return await node.forward(request, kubelet, path, _without(request.query, "container"))
    if sub == "proxy" and t.rt.plural == "nodes":
        node_obj = api.res.get(t.rt, "", t.name).obj  # NotFound for a node that does not exist
        node = _node(request)
        kubelet = node.kubelet_of(t.name)
        if kubelet is None:
            return await node.node_proxy(request, node_obj, t.rest)
        return await node.forward(request, kubelet, "/" + t.rest, request.query)
    if sub == "finalize" and m == "PUT":
        body = await api._body(request)
        entry = finalize_namespace(api, t, body)
        return api.render_one(request, t.rt, entry)
    raise errors.method_not_allowed("the server does not allow this method on the requested resource")


def _node(request: web.Request):
    node = request.app.get(NODE_KEY)
    if node is None:
        raise errors.APIError(503, "ServiceUnavailable", "the node simulation is not running on this server")
    return node


async def pod_log(api: "API", request: web.Request, t: "Target") -> web.StreamResponse:
    """pods/log as text/plain (``kubectl logs``); what a simulated container printed comes
    from its pod's ``mockkube.io/log`` annotations, a process container's from its output
    (see mockkube/kubelet/logs.py and kubelet/runtime/, reached through ``NODE_KEY``);
    ``follow=true`` streams a growing log until the container ends or the client leaves.
    The options decode before the pod is read (machinery/podlogoptions.py, as a kubelet
    decodes them too)."""
    from mockkube.machinery import podlogoptions

    q = request.query
    opts = podlogoptions.decode(q)
    if bad := podlogoptions.validate(opts):  # as LogREST answers, before the pod is read
        raise errors.invalid("PodLogOptions", "", t.name, bad)
    pod = api.res.get(t.rt, t.namespace, t.name).obj
    node = _node(request)
    container = node.pick_container(pod, opts.container)
    kubelet = node.kubelet_of((pod.get("spec") or {}).get("nodeName") or "")
    if kubelet is not None:  # upstream's LogLocation: the node's kubelet serves the log
        path = f"/containerLogs/{t.namespace}/{t.name}/{container}"
        return await node.forward(request, kubelet, path, _without(q, "container"))
    return await node.serve_log(request, pod, container, opts, api.res.clock())


_KUBELET_PATHS = {"exec": "exec", "attach": "attach", "portforward": "portForward"}


def _without(query, name: str) -> list[tuple[str, str]]:
    return [(k, v) for k, v in query.items() if k != name]


def _typed(body: dict, group: str, version: str, kind: str) -> None:
    """The decode step of a subresource's request kind: encoding/json's first type error
    as transformDecodeError's 400 (a field of the wrong JSON type is never a 500)."""
    from mockkube.apiserver.http import params
    from mockkube.machinery import validation

    errs = params.type_errors(body, group, version, kind)
    if errs:
        raise validation.decode_error(kind, version, errs)


async def legacy_binding(api: "API", request: web.Request, t: "Target") -> web.Response:
    """``POST /api/v1/namespaces/{ns}/bindings`` (LegacyBindingREST): pods/binding for the
    pod named by the Binding's own metadata.name."""
    from dataclasses import replace

    opts = params.write_options(request.query, request.headers.get("User-Agent"), "CreateOptions")
    body = await api._body(request)
    if not isinstance(body, dict) or body.get("kind") not in (None, "Binding"):
        raise errors.bad_request("a Binding object is required")
    name = (body.get("metadata") or {}).get("name", "") if isinstance(body.get("metadata"), dict) else ""
    pods = api.reg.get("", "v1", "pods")
    bind(api, replace(t, rt=pods, name=name, sub="binding"), body, opts.dry_run)
    return json_response(
        _dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}), 201
    )


def bind(api: "API", t: "Target", body: dict, dry_run: bool = False) -> Entry:
    """pods/binding: set spec.nodeName once, as the scheduler's Bind does."""
    if not isinstance(body, dict) or body.get("kind") not in (None, "Binding"):
        raise errors.bad_request("a Binding object is required")
    _typed(body, "", "v1", "Binding")
    target = (body.get("target") or {}).get("name", "")
    if not target:
        raise errors.invalid("Binding", "", t.name, [fe.required("target.name", "")])
    return api.res.bind(t.namespace, t.name, target, dry_run)


def evict(api: "API", t: "Target", body: dict, dry_run: list[str] | None = None) -> None:
    """pods/eviction: delete the pod unless its PodDisruptionBudget has no disruption left
    (429 with upstream's message and cause), charging the budget and marking the pod with
    a DisruptionTarget condition first, as kube-apiserver's eviction REST does."""
    from mockkube.rules import disruption

    if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
        raise errors.bad_request("an Eviction object is required")
    _typed(body, "policy", "v1", "Eviction")
    if (body.get("metadata") or {}).get("name") != t.name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    res = api.res
    opts = dict(body.get("deleteOptions") or {})
    # the eviction REST's propagateDryRun: the request's dryRun applies unless the
    # Eviction's deleteOptions carry their own (upstream answers a mismatch with a plain
    # error, a 500; a 400 here)
    if dry_run and not opts.get("dryRun"):
        opts["dryRun"] = list(dry_run)
    elif dry_run and list(opts["dryRun"]) != list(dry_run):
        raise errors.bad_request(
            f"Non-matching dry-run options in request and content: [{' '.join(dry_run)}] and "
            f"[{' '.join(map(str, opts['dryRun']))}]"
        )
    pod = res.get(t.rt, t.namespace, t.name).obj
    dry = bool(opts.get("dryRun"))
    phase = (pod.get("status") or {}).get("phase")
    if phase not in ("Succeeded", "Failed", "Pending") and not pod["metadata"].get("deletionTimestamp"):
        pdb_rt = res.registry.get("policy", "v1", "poddisruptionbudgets")
        pdbs = [e.obj for e in res.list(pdb_rt, t.namespace).entries if disruption.selects(e.obj, pod)]
        if len(pdbs) > 1:
            raise errors.internal(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
            )
        if pdbs:
            pdb = pdbs[0]
            status = disruption.check_eviction(pdb, pod)
            if status is not None and not dry:
                import copy as _copy

                new = _copy.deepcopy(pdb)
                status.setdefault("disruptedPods", {})
                status["disruptedPods"] = dict(status["disruptedPods"], **{t.name: res.now()})
                new["status"] = status
                res.update(pdb_rt, t.namespace, pdb["metadata"]["name"], new, subresource="status")
    if not dry and not pod["metadata"].get("deletionTimestamp"):
        cond = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting",
            "lastProbeTime": None,
            "lastTransitionTime": res.now(),
        }
        try:
            res.patch(
                t.rt,
                t.namespace,
                t.name,
                "strategic",
                {"metadata": {"uid": pod["metadata"]["uid"]}, "status": {"conditions": [cond]}},
                subresource="status",
            )
        except errors.APIError:
            pass
    res.delete(t.rt, t.namespace, t.name, opts, dry_run=dry)


def scale_of(api: "API", t: "Target") -> dict:
    obj = api.res.get(t.rt, t.namespace, t.name).obj
    from mockkube.machinery.selectors import label_selector_from_object, selector_from_set

    paths = getattr(t.rt.strategy, "scale_paths", lambda: None)()
    if paths is not None:  # a custom resource's scale subresource reads its declared paths
        from mockkube.machinery.customresource import scale_view

        return scale_view(obj, paths)

    spec = obj.get("spec", {})
    try:
        if t.rt.kind == "ReplicationController":  # a plain label map, not a LabelSelector
            selector = str(selector_from_set(spec.get("selector") or {})) if spec.get("selector") else ""
        else:
            selector = str(label_selector_from_object(spec.get("selector"))) if spec.get("selector") else ""
    except errors.APIError:
        selector = ""
    m = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"],
            "namespace": m.get("namespace", ""),
            "uid": m.get("uid"),
            "resourceVersion": m.get("resourceVersion"),
            "creationTimestamp": m.get("creationTimestamp"),
        },
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": selector},
    }


def set_scale(api: "API", t: "Target", body: dict, opts) -> dict:
    if not isinstance(body, dict):
        raise errors.bad_request("a Scale object is required")
    _typed(body, "autoscaling", "v1", "Scale")
    replicas = (body.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "Scale",
            "autoscaling",
            t.name,
            [fe.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    entry = api.res.get(t.rt, t.namespace, t.name)
    new = copy.deepcopy(entry.obj)
    paths = getattr(t.rt.strategy, "scale_paths", lambda: None)()
    if paths is not None:
        from mockkube.machinery.customresource import convert, set_path

        new = convert(new, t.rt.api_version, getattr(t.rt.strategy, "converter", None))
        set_path(new, paths.get("specReplicasPath", ".spec.replicas"), replicas)
    else:
        new["spec"]["replicas"] = replicas
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv:
        new["metadata"]["resourceVersion"] = rv
    api.res.update(t.rt, t.namespace, t.name, new, opts)
    return scale_of(api, t)


def finalize_namespace(api: "API", t: "Target", body: dict) -> Entry:
    if not isinstance(body, dict):
        raise errors.bad_request("the object provided is not a JSON object")
    _typed(body, "", "v1", "Namespace")
    entry = api.res.get(t.rt, "", t.name)
    new = copy.deepcopy(entry.obj)
    fins = ((body or {}).get("spec") or {}).get("finalizers") or []
    new.setdefault("spec", {})["finalizers"] = fins
    return api.res.finalize_namespace(t.name, new)
