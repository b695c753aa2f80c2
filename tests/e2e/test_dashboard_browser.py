"""The live dashboard in a real browser (Debian's chromium + chromedriver, driven by
selenium): load /mockkube/ui, create a pod through the API, see its GPU light up without
a reload; a pod that cannot fit shows up as pending with its explain verdict."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mockkube.testing.waiting import until

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
webdriver = pytest.importorskip("selenium.webdriver")


@pytest.fixture
def browser(tmp_path):
    if not CHROMEDRIVER or not CHROMIUM:
        pytest.skip("chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield drv
    finally:
        drv.quit()


def _read(fn):
    """``fn()``, or None when the page re-rendered what it was reading (retried by until)."""
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        return fn()
    except StaleElementReferenceException:
        return None


WHOLE_GPU = """
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers: [{name: main, image: trainer, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: whole-gpu}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: whole-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          selectors:
          - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}
"""


def _chart(browser, name: str) -> tuple[int, dict]:
    from selenium.webdriver.common.by import By

    box = browser.find_element(By.ID, "chart-" + name)
    return int(box.get_attribute("data-points") or 0), json.loads(box.get_attribute("data-last") or "{}")


def test_dashboard_shows_a_device_light_up_live(mockkube_fresh, browser):
    """Load, create a pod taking a whole partitioned GPU, see the GPU allocated, its
    partitions turn blocked and their counter set full, the claim in use and the pods chart
    move; then a pod that cannot fit is listed with its explain verdict."""
    from selenium.webdriver.common.by import By

    k = mockkube_fresh.kubectl
    browser.get(mockkube_fresh.url + "/mockkube/ui?interval=0.3")
    until(lambda: browser.find_elements(By.ID, "node-gpu-node-0"), what="nodes rendered")
    until(lambda: _read(lambda: "live" in browser.find_element(By.ID, "status").text), what="live")
    assert browser.find_elements(By.CSS_SELECTOR, "#chart-pods canvas"), (
        "uPlot drew the chart (served from the package)"
    )
    until(lambda: _read(lambda: _chart(browser, "pods")[0] >= 2), what="the charts sampled the metrics")
    assert _chart(browser, "pods")[1]["running"] == 0
    gpus = browser.find_elements(By.CSS_SELECTOR, "#node-gpu-node-0 .dev[data-device^='gpu-']")
    assert gpus and not browser.find_elements(By.CSS_SELECTOR, "#nodes .dev.allocated, #nodes .dev.blocked")

    k("apply", "-f", "-", input=WHOLE_GPU)  # the page is not reloaded
    held = until(
        lambda: _read(
            lambda: [
                (e.get_attribute("data-pool"), e.get_attribute("data-device"), e.get_attribute("data-claim"))
                for e in browser.find_elements(By.CSS_SELECTOR, "#nodes .dev.allocated[data-pod='trainer']")
            ]
        ),
        what="the pod's GPU allocated",
    )
    assert len(held) == 1
    node, gpu, claim = held[0]
    assert claim.startswith("default/trainer-gpu-")
    counter_set = f"#node-{node} .cset[data-counter-set='{gpu}-counters']"
    partitions = until(
        lambda: _read(
            lambda: [
                (e.get_attribute("data-device"), e.get_attribute("data-state"), e.get_attribute("data-blocked-by"))
                for e in browser.find_elements(By.CSS_SELECTOR, f"{counter_set} .dev")
                if e.get_attribute("data-device") != gpu
            ]
        ),
        what="the GPU's partitions",
    )
    assert len(partitions) == 9 and all(state == "blocked" and by == gpu for _, state, by in partitions), partitions
    fractions = until(
        lambda: _read(
            lambda: [
                g.get_attribute("data-fraction")
                for g in browser.find_elements(By.CSS_SELECTOR, f"{counter_set} > .gauge")
            ]
        ),
        what="the counter set's gauges",
    )
    assert fractions == ["1", "1"]  # memory, slices: all in use
    other = until(
        lambda: _read(
            lambda: [
                e.get_attribute("data-state")
                for e in browser.find_elements(
                    By.CSS_SELECTOR, f"#node-{node} .dev[data-device^='gpu-']:not([data-device^='{gpu}'])"
                )
            ]
        ),
        what="the other GPUs' devices",
    )
    assert other and all(state == "free" for state in other)  # other GPUs' partitions stay free
    row = until(
        lambda: _read(
            lambda: [
                tr.get_attribute("data-state")
                for tr in browser.find_elements(By.CSS_SELECTOR, f"#claims tr[data-claim='{claim}']")
                if tr.get_attribute("data-state") == "in use"
            ]
        ),
        what="the claim in use",
    )
    assert row == ["in use"]
    until(lambda: _read(lambda: _chart(browser, "pods")[1]["running"] == 1), what="the pods chart moved")
    until(lambda: _read(lambda: _chart(browser, "claims")[1]["claims allocated"] == 1), what="the claims chart moved")

    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-tiger.yaml"))
    row = until(
        lambda: _read(
            lambda: [
                li.text
                for li in browser.find_elements(By.CSS_SELECTOR, "#pending li[data-pod='default/pod-with-tiger']")
                if "nodes fit" in li.text
            ]
        ),
        what="pending pod with its explain verdict",
    )
    assert "0/4 nodes fit" in row[0]
    until(lambda: _read(lambda: _chart(browser, "pods")[1]["pending"] == 1), what="the pending pod charted")
    if os.environ.get("MOCKKUBE_SCREENSHOT"):
        browser.set_window_size(1400, 1000)
        browser.execute_script("window.dispatchEvent(new Event('resize'))")
        browser.save_screenshot(os.environ["MOCKKUBE_SCREENSHOT"])
