"""One module per API group; importing this package registers every served resource."""

from mockkube.resources import apps, batch, coordination, core, dra, events  # noqa: F401
from mockkube.resources import (apiextensions, apiregistration, core_cluster, discovery, networking, node,  # noqa: F401
                                policy, rbac, scheduling, storage)
