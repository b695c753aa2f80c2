"""mockkube's own API beside Kubernetes': ``/mockkube/v1/...`` (reset, settle and the clock;
cluster profiles, node pod resources and driver health; faults; why a pod is pending) and
the dashboard at ``/mockkube/ui``. Handlers reach the assembled server through
``SERVER_KEY`` on the app; the CLI's ``mockkube reset|clock|fault|explain|driver`` call them."""

from __future__ import annotations

from aiohttp import web


def setup(app: web.Application) -> None:
    from mockkube.control import cluster, explain, faults, reset, ui

    cluster.setup(app)  # /mockkube/v1/...: profiles, node pod resources, driver health
    reset.setup(app)  # /mockkube/v1/reset, settle and clock
    explain.setup(app)  # /mockkube/v1/namespaces/NS/pods/NAME/explain
    faults.setup(app)  # /mockkube/v1/faults and the injecting middleware
    ui.setup(app)  # /mockkube/ui: the live dashboard
