"""The live dashboard in a real browser (Debian's chromium + chromedriver, driven by
selenium): load /mockkube/ui, create a pod through the API, see its GPU light up without
a reload; a pod that cannot fit shows up as pending with its explain verdict."""

from __future__ import annotations

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
        "--window-size=1000,700",
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


def test_dashboard_shows_a_device_light_up_live(mockkube_fresh, browser):
    from selenium.webdriver.common.by import By

    k = mockkube_fresh.kubectl
    browser.get(mockkube_fresh.url + "/mockkube/ui")
    until(lambda: browser.find_elements(By.ID, "node-gpu-node-0"), what="nodes rendered")
    until(lambda: _read(lambda: "live" in browser.find_element(By.ID, "status").text), what="live")
    gpus = browser.find_elements(By.CSS_SELECTOR, "#node-gpu-node-0 .dev[data-device^='gpu-']")
    assert gpus and not browser.find_elements(By.CSS_SELECTOR, ".dev.held")
    k("apply", "-f", str(ROOT / "tests/e2e/manifests/dra-cats.yaml"))  # the page is not reloaded
    claim = until(
        lambda: _read(
            lambda: [
                e.get_attribute("data-claim")
                for e in browser.find_elements(By.CSS_SELECTOR, ".dev.held[data-pod='pod-with-cats']")
            ]
        ),
        what="the pod's device lit up",
    )
    assert claim[0].startswith("default/pod-with-cats-cat-0-")
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
    if os.environ.get("MOCKKUBE_SCREENSHOT"):
        browser.save_screenshot(os.environ["MOCKKUBE_SCREENSHOT"])
