"""``GET /mockkube/v1/namespaces/{namespace}/pods/{name}/explain``: why a pod is pending
(mockkube.scheduler.explain), as JSON; ``?format=text`` gives the text the CLI prints.
The diagnosis runs on the components' loop, where the scheduler's view lives."""

from __future__ import annotations

import json

from aiohttp import web

from mockkube.machinery import errors


def _explain_on_cluster(server, namespace: str, name: str) -> dict:
    from mockkube.scheduler.explain import explain, find_scheduler

    sched = find_scheduler(server)
    if sched is None:
        raise errors.APIError(503, "ServiceUnavailable", "the scheduler is not running on this server")
    pod = sched.client.get(sched.pods_rt, namespace, name)
    if pod is None:
        raise errors.not_found("pods", "", name)
    return explain(sched, pod)


async def explain_pod(request: web.Request) -> web.Response:
    from mockkube.apiserver.http.app import SERVER_KEY
    from mockkube.scheduler.explain import render_text

    server = request.app[SERVER_KEY]
    ns, name = request.match_info["namespace"], request.match_info["name"]
    remote = next(
        (c for c in server.components if hasattr(c, "explain") and getattr(c, "name", "") == "scheduler"), None
    )
    if remote is not None:  # the scheduler runs in a process of its own
        report = await server.on_cluster(remote.explain, ns, name)
        if report is None:
            raise errors.not_found("pods", "", name)
    else:
        report = await server.on_cluster(_explain_on_cluster, server, ns, name)
    if request.query.get("format") == "text":
        return web.Response(text=render_text(report, all_devices=request.query.get("all") == "true") + "\n")
    return web.Response(body=json.dumps(report).encode(), content_type="application/json")


def setup(app: web.Application) -> None:
    app.router.add_get("/mockkube/v1/namespaces/{namespace}/pods/{name}/explain", explain_pod)
