"""The REST verbs over HTTP: routing of /api and /apis paths onto the generic registry."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone

from aiohttp import web

from mockkube.apiserver.http import discovery, encoding, identity, params, requestmetrics, subresources, watchstream
from mockkube.apiserver.http.responses import json_response
from mockkube.apiserver.rest import PATCH_TYPES, Resources
from mockkube.machinery import errors, jsoncodec
from mockkube.machinery import requestcontext as admission_identity
from mockkube.machinery.registry import Registry, ResourceType
from mockkube.storage.cache import Entry


@dataclass
class Target:
    rt: ResourceType | None
    group: str
    version: str
    namespace: str = ""
    name: str = ""
    sub: str = ""
    rest: str = ""  # a proxy subresource's path after it (nodes/NAME/proxy/REST)


def dumps(obj) -> bytes:
    return jsoncodec.dumps(obj, ascii=True)


def status_success(rt: ResourceType, obj: dict) -> dict:
    m = obj.get("metadata", {})
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": m.get("name", ""), "group": rt.group, "kind": rt.plural, "uid": m.get("uid", "")},
    }


class API:
    def __init__(self, resources: Resources, registry: Registry, stopping) -> None:
        self.res = resources
        self.reg = registry
        self.stopping = stopping  # asyncio.Event set at shutdown: open watches end

    # -- routing ---------------------------------------------------------------
    def parse(self, path: str) -> Target | dict:
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise errors.not_found("", "", "")
        if parts[0] == "api":
            if len(parts) < 2:
                return {"doc": "api"}
            group, version, rest = "", parts[1], parts[2:]
            if version != "v1":
                raise _no_route()
        elif parts[0] == "apis":
            if len(parts) == 1:
                return {"doc": "apis"}
            if len(parts) == 2:
                return {"doc": "group", "group": parts[1]}
            group, version, rest = parts[1], parts[2], parts[3:]
            if not self.reg.has_group_version(group, version):
                raise _no_route()
        else:
            raise _no_route()
        if not rest:
            return {"doc": "resources", "group": group, "version": version}
        t = Target(None, group, version)
        if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
            t.namespace = rest[1]
            rest = rest[2:]
        plural = rest[0]
        rt = self.reg.get(group, version, plural)
        if rt is None:
            raise _no_route()
        t.rt = rt
        if len(rest) > 1:
            t.name = rest[1]
        if len(rest) > 2:
            t.sub = rest[2]
            if rt.subresource(t.sub) is None or (len(rest) > 3 and t.sub != "proxy"):
                raise _no_route()
            t.rest = "/".join(rest[3:])
        if rt.namespaced and not t.namespace and t.name:
            raise _no_route()
        if not rt.namespaced and t.namespace:
            raise _no_route()
        return t

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            target = self.parse(request.path)
        except errors.APIError as e:
            # a type another API server has just started serving (a CRD written there): look
            # again once this one has caught up with the shared log (PostgreSQL). Again even
            # when sync() brings nothing new: the listener may have applied it since parse()
            if e.code != 404 or not self.res.store.shared:
                raise
            self.res.store.sync()
            target = self.parse(request.path)
        if isinstance(target, dict):
            return self.discovery(request, target)
        request[requestmetrics.TARGET] = target
        admission_identity.set_user(identity.request_user(request))
        m = request.method
        _require_verb(m, target)
        if getattr(target.rt.strategy, "computed", False):  # componentstatuses: probed, not stored
            return self.computed(request, target)
        if getattr(target.rt.strategy, "legacy_binding", False) and m == "POST" and not target.name:
            return await subresources.legacy_binding(self, request, target)
        if not target.name:
            if m == "GET":
                return await self.list_or_watch(request, target)
            if m == "POST":
                return await self.create(request, target)
            if m == "DELETE":
                return await self.delete_collection(request, target)
            raise _not_allowed(m, target)
        if target.sub and target.sub not in ("status", "resize", "approval"):
            return await subresources.handle(self, request, target)
        if m == "GET":
            return self.get(request, target)
        if m == "PUT":
            return await self.update(request, target)
        if m == "PATCH":
            return await self.patch(request, target)
        if m == "DELETE" and not target.sub:
            return await self.delete(request, target)
        raise _not_allowed(m, target)

    def discovery(self, request: web.Request, doc: dict) -> web.Response:
        if request.method != "GET":
            raise errors.method_not_allowed("the server does not allow this method on the requested resource")
        kind = doc["doc"]
        accept = request.headers.get("Accept")
        if kind in ("api", "apis"):
            if discovery.wants_aggregated(accept):
                body = discovery.dumps(discovery.aggregated(self.reg, core=kind == "api"))
                return web.Response(body=body + b"\n", headers={"Content-Type": discovery.AGGREGATED_CT})
            d = discovery.api_versions() if kind == "api" else discovery.api_group_list(self.reg)
            return json_response(discovery.dumps(d))
        if kind == "group":
            d = discovery.api_group(self.reg, doc["group"])
            if d is None:
                raise _no_route()
            return json_response(discovery.dumps(d))
        return json_response(discovery.dumps(discovery.resource_list(self.reg, doc["group"], doc["version"])))

    # -- rendering -------------------------------------------------------------
    def render_one(
        self, request: web.Request, rt: ResourceType, entry: Entry, status: int = 200, warnings: list[str] | None = None
    ) -> web.Response:
        wanted = encoding.negotiate(request.headers.get("Accept"))
        if wanted.table:
            from mockkube.apiserver.http import tables

            t = tables.make_table(
                rt.group,
                rt.plural,
                [entry.obj],
                request.query.get("includeObject", ""),
                datetime.now(timezone.utc),
                {"resourceVersion": str(entry.rv)},
                printer=rt.table,
            )
            return json_response(dumps(t), status, warnings)
        if wanted.partial:
            return json_response(dumps(_partial(entry.obj)), status, warnings)
        if entry.obj.get("apiVersion") != rt.api_version and (rt.schema is not None or rt.strategy_converts):
            from mockkube.machinery.customresource import raw_as

            return json_response(
                raw_as(entry, rt.api_version, getattr(rt.strategy, "converter", None)), status, warnings
            )
        return json_response(entry.raw or dumps(entry.obj), status, warnings)

    def computed(self, request: web.Request, t: Target) -> web.Response:
        """get and list of a kind answered by its strategy (``items()``, ``get(name)``),
        with the kind's deprecation warning on every answer, errors included."""
        rt = t.rt
        warnings = list(getattr(rt.strategy, "warnings", ()))
        try:
            if request.method != "GET" or t.sub:
                raise _not_allowed(request.method, t)
            p = params.list_params(request.query)
            if not t.name and p.watch:
                raise errors.APIError(
                    405,
                    "MethodNotAllowed",
                    f'watch is not supported on resources of kind "{rt.plural}"',
                    {"group": rt.group, "kind": rt.plural},
                )
            if t.name:
                objs, meta = [rt.strategy.get(t.name)], None
            else:
                pred = self.res.predicate(rt, p.label_selector, p.field_selector)
                objs, meta = [o for o in rt.strategy.items() if pred.fn is None or pred.fn(o)], {}
        except errors.APIError as e:
            return json_response(dumps(e.status()), e.code, warnings)
        wanted = encoding.negotiate(request.headers.get("Accept"))
        if wanted.table:
            from mockkube.apiserver.http import tables

            tbl = tables.make_table(rt.group, rt.plural, objs, p.include_object, datetime.now(timezone.utc), {})
            return json_response(dumps(tbl), 200, warnings)
        if meta is None:
            return json_response(dumps(objs[0]), 200, warnings)
        return json_response(
            dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": objs}), 200, warnings
        )

    # -- verbs -----------------------------------------------------------------
    def get(self, request: web.Request, t: Target) -> web.Response:
        entry = self.res.get(t.rt, t.namespace, t.name)
        return self.render_one(request, t.rt, entry)

    async def list_or_watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        p = params.list_params(request.query)
        wanted = encoding.negotiate(request.headers.get("Accept"))
        if p.watch:
            return await watchstream.serve(self, request, t, p, wanted)
        ns = t.namespace or None
        result = self.res.list(
            t.rt, ns, p.label_selector, p.field_selector, p.limit, p.continue_token, p.resource_version
        )
        meta: dict = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            meta["continue"] = result.continue_token
            if result.remaining is not None:
                meta["remainingItemCount"] = result.remaining
        rt = t.rt
        if wanted.table:
            from mockkube.apiserver.http import tables

            tbl = tables.make_table(
                rt.group,
                rt.plural,
                [e.obj for e in result.entries],
                p.include_object,
                datetime.now(timezone.utc),
                meta,
                printer=rt.table,
            )
            return json_response(dumps(tbl))
        if wanted.partial:
            body = {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": [_partial(e.obj) for e in result.entries],
            }
            return json_response(dumps(body))
        head = dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})[:-1]
        if (rt.schema is not None or rt.strategy_converts) and any(
            e.obj.get("apiVersion") != rt.api_version for e in result.entries
        ):
            # custom resources stored at another version: converted, all in one review
            from mockkube.machinery.customresource import convert_all
            from mockkube.machinery.customresource import dumps as cr_dumps

            items = [
                cr_dumps(o)
                for o in convert_all(
                    [e.obj for e in result.entries], rt.api_version, getattr(rt.strategy, "converter", None)
                )
            ]
        else:
            items = [e.raw for e in result.entries]
        body = head + b',"items":[' + b",".join(items) + b"]}"
        return json_response(body)

    async def _body(self, request: web.Request, patch: bool = False):
        raw = await _read(request)
        return encoding.decode_body(raw, request.headers.get("Content-Type"), patch=patch)

    async def _write(self, fn, *args, **kwargs):
        """Run a write verb; off the event loop while admission webhooks are configured, so a
        slow webhook never holds up other requests (contextvars, the identity, go along)."""
        if self.res.webhooks.active():
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    async def create(self, request: web.Request, t: Target) -> web.Response:
        opts = params.write_options(request.query, request.headers.get("User-Agent"), "CreateOptions")
        obj = await self._body(request)
        if getattr(t.rt.strategy, "review", None):  # reviews: answered, never stored
            from mockkube.apiserver.http.identity import request_user

            if not isinstance(obj, dict):
                raise errors.bad_request("the body of the request must be an object")
            self.res.check_body(t.rt, obj, opts)
            return json_response(dumps(t.rt.strategy.review(obj, request_user(request), t.namespace, self.auth)), 201)
        entry = await self._write(self.res.create, t.rt, t.namespace, obj, opts, owned=True)
        return self.render_one(request, t.rt, entry, 201, opts.warnings)

    async def update(self, request: web.Request, t: Target) -> web.Response:
        opts = params.write_options(request.query, request.headers.get("User-Agent"), "UpdateOptions")
        obj = await self._body(request)
        if not t.sub and t.rt.strategy.allow_create_on_update and self.res.store.get(t.rt, t.namespace, t.name) is None:
            if (
                isinstance(obj, dict)
                and isinstance(obj.get("metadata"), dict)
                and obj["metadata"].get("name", "") != t.name
            ):
                raise errors.bad_request(
                    f"the name of the object ({obj['metadata'].get('name', '')}) does not "
                    f"match the name on the URL ({t.name})"
                )
            entry = await self._write(self.res.create, t.rt, t.namespace, obj, opts, owned=True)
            return self.render_one(request, t.rt, entry, 201, opts.warnings)
        entry = await self._write(self.res.update, t.rt, t.namespace, t.name, obj, opts, subresource=t.sub, owned=True)
        return self.render_one(request, t.rt, entry, 200, opts.warnings)

    async def patch(self, request: web.Request, t: Target) -> web.Response:
        mt = encoding.media_type(request.headers.get("Content-Type"))
        ptype = PATCH_TYPES.get(mt)
        if ptype is None:
            raise errors.unsupported_media_type(mt, list(PATCH_TYPES))
        opts = params.write_options(request.query, request.headers.get("User-Agent"), "PatchOptions", ptype)
        body = await self._body(request, patch=True)
        entry, created = await self._write(
            self.res.patch, t.rt, t.namespace, t.name, ptype, body, opts, subresource=t.sub
        )
        return self.render_one(request, t.rt, entry, 201 if created else 200, opts.warnings)

    async def _delete_options(self, request: web.Request) -> tuple[dict, bool]:
        raw = await _read(request)
        body = None
        if raw.strip():
            body = params.delete_options_body(encoding.decode_body(raw, request.headers.get("Content-Type")))
        return params.delete_options(request.query, body)

    async def delete(self, request: web.Request, t: Target) -> web.Response:
        opts, dry = await self._delete_options(request)
        warnings: list[str] = []  # a Warn policy's message on DELETE
        entry, gone = await self._write(
            self.res.delete, t.rt, t.namespace, t.name, opts, dry_run=dry, warnings=warnings
        )
        if not gone:
            return self.render_one(request, t.rt, entry, 200 if dry else 202, warnings)
        if getattr(t.rt.strategy, "return_deleted_object", False):
            return self.render_one(request, t.rt, entry, 200, warnings)
        return json_response(dumps(status_success(t.rt, entry.obj)), 200, warnings)

    async def delete_collection(self, request: web.Request, t: Target) -> web.Response:
        p = params.list_params(request.query)  # upstream decodes the ListOptions first
        opts, dry = await self._delete_options(request)
        result = self.res.list(t.rt, t.namespace or None, p.label_selector, p.field_selector)
        items = []
        for e in result.entries:
            ns = e.obj["metadata"].get("namespace", "")
            try:
                entry, _ = await self._write(self.res.delete, t.rt, ns, e.obj["metadata"]["name"], opts, dry_run=dry)
            except errors.APIError as err:
                if err.code == 404:
                    continue
                raise
            items.append(entry.obj)
        body = {
            "kind": t.rt.list_kind,
            "apiVersion": t.rt.api_version,
            "metadata": {"resourceVersion": str(self.res.store.rv)},
            "items": items,
        }
        return json_response(dumps(body))


def _partial(obj: dict) -> dict:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


async def _read(request: web.Request) -> bytes:
    if request.content_length is not None and request.content_length > encoding.MAX_BODY:
        raise errors.request_entity_too_large(f"limit is {encoding.MAX_BODY}")
    chunks = []
    size = 0
    async for chunk in request.content.iter_chunked(65536):
        size += len(chunk)
        if size > encoding.MAX_BODY:
            raise errors.request_entity_too_large(f"limit is {encoding.MAX_BODY}")
        chunks.append(chunk)
    return b"".join(chunks)


def _no_route() -> errors.APIError:
    return errors.APIError(
        404,
        "NotFound",
        "the server could not find the requested resource",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]},
    )


_VERB_OF_METHOD = {
    ("DELETE", False): "deletecollection",
    ("POST", False): "create",
    ("DELETE", True): "delete",
    ("PUT", True): "update",
    ("PATCH", True): "patch",
    ("GET", True): "get",
    ("GET", False): "list",
}


def _require_verb(method: str, t: Target) -> None:
    """A verb the resource does not declare is not routed upstream: 405 (e.g. namespaces
    have no deletecollection, so ``DELETE /api/v1/namespaces`` must not delete anything)."""
    verb = _VERB_OF_METHOD.get((method, bool(t.name)))
    if (
        verb is not None
        and not t.sub
        and t.rt is not None
        and verb not in t.rt.verbs
        and not (verb == "list" and "watch" in t.rt.verbs)
    ):
        raise _not_allowed(method, t)


def _not_allowed(method: str, t: Target) -> errors.APIError:
    return errors.method_not_allowed("the server does not allow this method on the requested resource")
