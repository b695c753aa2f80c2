"""ImageLocality: favours nodes that already have the pod's images (status.images), scaled
by how widely each image is spread over the cluster, with upstream's thresholds. When no
node reports any image every node scores the same (0), so PreScore is skipped."""

from __future__ import annotations

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache, NodeInfo

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """An image without a tag gets ":latest" (a ":" before the last "/" is a registry port)."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return fw.MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality(fw.Plugin):
    name = "ImageLocality"
    weight = 1

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def skip_score(self, state, pod) -> bool:
        if not self.cache.image_nodes:
            return True  # no node reports images: every node would score 0
        spec = pod.get("spec") or {}
        containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        state[self.name] = ([normalized_image_name(c.get("image") or "") for c in containers], len(containers))
        return False

    def score(self, state, pod, node: NodeInfo) -> int:
        images, n = state[self.name]
        total_nodes = len(self.cache.node_list)
        total = 0
        for image in images:
            size = node.images.get(image)
            if size is not None:
                spread = self.cache.image_nodes.get(image, 0) / total_nodes
                total += int(size * spread)
        return calculate_priority(total, n)
