"""ImageLocality against upstream's image_locality_test.go (TestImageLocalityPriority,
TestNormalizedImageName), case by case."""

from __future__ import annotations

import pytest

from mockkube.scheduler import framework as fw
from mockkube.scheduler.cache import Cache
from mockkube.scheduler.plugins.imagelocality import MB, ImageLocality, normalized_image_name


def img(size_mb: int, *names: str) -> dict:
    return {"names": list(names), "sizeBytes": size_mb * MB}


NODE_40_300_2000 = [
    img(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    img(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    img(2000, "gcr.io/2000:latest"),
]
NODE_250_10 = [img(250, "gcr.io/250:latest"), img(10, "gcr.io/10:latest", "gcr.io/10:v1")]
NODE_600_40_900 = [img(600, "gcr.io/600:latest"), img(40, "gcr.io/40:latest"), img(900, "gcr.io/900:latest")]
NODE_300_600_900 = [img(300, "gcr.io/300:latest"), img(600, "gcr.io/600:latest"), img(900, "gcr.io/900:latest")]
NODE_4000_30 = [img(4000, "gcr.io/4000:latest"), img(30, "gcr.io/30:latest")]
NODE_20_30_40 = [img(20, "gcr.io/20:latest"), img(30, "gcr.io/30:latest"), img(40, "gcr.io/40:latest")]
NO_IMAGES: list = []


def pod(*images: str, init: tuple = ()) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return {"metadata": {"name": "p"}, "spec": spec}


CASES = [
    (
        "two images spread on two nodes, prefer the larger image one",
        pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        "two images on one node, prefer this node",
        pod("gcr.io/40", "gcr.io/300"),
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    ("if exceed limit, use limit", pod("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10], [100, 0]),
    (
        "if exceed limit, use limit (with node which has no images present)",
        pod("gcr.io/10", "gcr.io/4000"),
        [NODE_4000_30, NODE_250_10, NO_IMAGES],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
        [32, 36, 0],
    ),
    ("pod with multiple small images", pod("gcr.io/30", "gcr.io/40"), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        pod("gcr.io/30", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


@pytest.mark.parametrize("name,p,node_images,want", CASES, ids=[c[0] for c in CASES])
def test_image_locality_priority(name, p, node_images, want):
    cache = Cache()
    for i, images in enumerate(node_images):
        cache.set_node({"metadata": {"name": f"node{i + 1}"}, "status": {"images": images}})
    pl = ImageLocality(cache)
    state = fw.CycleState()
    assert not pl.skip_score(state, p)
    assert [pl.score(state, p, n) for n in cache.node_list] == want


@pytest.mark.parametrize(
    "name,given,want",
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@sha256:" + "ab" * 32, "root@sha256:" + "ab" * 32),
    ],
)
def test_normalized_image_name(name, given, want):
    assert normalized_image_name(given) == want


def test_skipped_when_no_node_reports_images():
    cache = Cache()
    cache.set_node({"metadata": {"name": "n"}, "status": {"images": [img(300, "gcr.io/300:latest")]}})
    cache.set_node({"metadata": {"name": "n"}, "status": {"images": []}})  # updated: image gone
    assert cache.image_nodes == {}
    assert ImageLocality(cache).skip_score(fw.CycleState(), pod("gcr.io/300"))
