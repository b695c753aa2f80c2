"""Requests nobody here wrote the generator of: schemathesis, driven by the server's own
``/openapi/v3`` documents, against a served mockkube.

For every operation of core/v1, apps/v1, batch/v1, resource.k8s.io/v1,
rbac.authorization.k8s.io/v1 and admissionregistration.k8s.io/v1, schemathesis draws
requests that fit the document (positive) and requests that break it (negative: wrong
types, missing fields, bodies in other media types). Properties: never a 5xx; every
failure is a proper Status whose ``code`` is the HTTP status; every request is answered
within ``TIMEOUT`` (a watch: its headers); the server keeps serving, and what got stored
still passes its kind's validation.

The generated namespace and name are replaced by ``fuzz`` and the seed's name in 3 of 4
and 1 of 2 cases (the rest keep schemathesis' strings), so requests reach objects that
exist. Deterministic (``derandomize=True``, no example database) and bounded:
``EXAMPLES`` per operation and generation mode, about 2,000 requests to 347 operations in
~85 s on one core (~50 s with ``-n 2``: one test per document). When hunting bugs:
MOCKKUBE_SCHEMATHESIS_EXAMPLES widens it, MOCKKUBE_FUZZ_OPS (a regex on "METHOD /path")
narrows it, MOCKKUBE_FUZZ_COLLECT=1 prints the status codes and every distinct problem,
MOCKKUBE_FUZZ_TIMES=1 the time spent per operation, MOCKKUBE_SCHEMATHESIS_COVERAGE=1 adds
schemathesis' systematic coverage phase (minutes).
"""

from __future__ import annotations

import copy
import json
import os
import re
import time

import pytest
import requests
import yaml
from _seeds import path, seed
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from mockkube.apiserver.resources import registry
from mockkube.testing.cluster import ThreadedCluster

schemathesis = pytest.importorskip("schemathesis")

DOCUMENTS = [
    "api/v1",
    "apis/apps/v1",
    "apis/batch/v1",
    "apis/resource.k8s.io/v1",
    "apis/rbac.authorization.k8s.io/v1",
    "apis/admissionregistration.k8s.io/v1",
]
EXAMPLES = int(os.environ.get("MOCKKUBE_SCHEMATHESIS_EXAMPLES", "3"))
COLLECT = bool(os.environ.get("MOCKKUBE_FUZZ_COLLECT"))
COVERAGE = bool(os.environ.get("MOCKKUBE_SCHEMATHESIS_COVERAGE"))
TIMEOUT = 10.0  # seconds for any answer (a loaded CI machine included)

REG = registry()
_GROUP_VERSIONS = {("" if d == "api/v1" else d.split("/")[1], d.rsplit("/", 1)[1]) for d in DOCUMENTS}
RTS = [
    rt for rt in REG.all() if (rt.group, rt.version) in _GROUP_VERSIONS and not getattr(rt.strategy, "virtual", False)
]
SEED_NAME = {rt.plural: seed(rt)["metadata"]["name"] for rt in RTS}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = ThreadedCluster(workdir=str(tmp_path_factory.mktemp("schemathesis")), components=False).start()
    s = requests.Session()
    assert s.post(c.url + "/api/v1/namespaces", json={"metadata": {"name": "fuzz"}}).status_code == 201
    for rt in RTS:
        r = s.post(c.url + path(rt), json=seed(rt))
        assert r.status_code in (201, 409), (rt.plural, r.text)  # the namespace "fuzz" exists already
    c.http = s
    c.problems = {}
    c.codes = {}
    c.requests = 0
    c.operations = 0
    try:
        yield c
    finally:
        c.stop()


def _pin(case, pin: int) -> None:
    """Point most requests at the namespace and objects that exist: namespace ``fuzz`` in
    3 of 4 cases, the seed's name in 2 of 4 (a namespace's: ``seed``, never ``fuzz``, whose
    deletion would stay Terminating without the namespace controller)."""
    pp = case.path_parameters
    if not pp:
        return
    if "namespace" in pp and pin > 0:
        pp["namespace"] = "fuzz"
    if "name" in pp and pin > 1:
        parts = [p for p in case.operation.path.split("/") if p]
        plural = parts[parts.index("{name}") - 1] if "{name}" in parts else ""
        pp["name"] = SEED_NAME.get(plural, "seed")


def _is_watch(method: str, query: dict) -> bool:
    """apimachinery's bool conversion: any value but "0"/"false" is true."""
    v = query.get("watch")
    if method != "GET" or v is None:
        return False
    v = v[0] if isinstance(v, list) and v else v
    return not (str(v) == "0" or str(v).lower() == "false")


def _shape(text: str) -> str:
    return re.sub(r"'[^']*'", "'…'", re.sub(r'"[^"]*"', '"…"', re.sub(r"\d+", "N", text)))[:200]


def problem(c, key: str, example: str) -> None:
    n, first = c.problems.get(key, (0, example))
    c.problems[key] = (n + 1, first if len(first) <= len(example) else example)


def _wire(case, kwargs: dict, wire: int) -> None:
    """The documents' request media type is "*/*", as upstream's: schemathesis picks any
    serializer it has for it (XML, multipart, images: all a 415). Clients send JSON, so in
    2 of 4 cases the generated body goes as JSON, in 1 as YAML, in 1 as schemathesis chose."""
    declared = (case.operation.definition.raw.get("requestBody") or {}).get("content") or {}
    if list(declared) != ["*/*"] or wire == 3 or isinstance(case.body, type(schemathesis.core.NOT_SET)):
        return
    for k in ("json", "data", "files"):
        kwargs.pop(k, None)
    headers = {k: v for k, v in kwargs.get("headers", {}).items() if k.lower() != "content-type"}
    if wire == 2:
        headers["Content-Type"] = "application/yaml"
        kwargs["data"] = yaml.safe_dump(case.body, allow_unicode=True).encode("utf-8", "surrogatepass")
    else:
        headers["Content-Type"] = "application/json"
        kwargs["data"] = json.dumps(case.body).encode("utf-8", "surrogatepass")
    kwargs["headers"] = headers


def fire(c, case, wire: int = 3) -> None:
    kwargs = case.as_transport_kwargs(base_url=c.url)
    method = kwargs["method"]
    _wire(case, kwargs, wire)
    watch = _is_watch(method, kwargs.get("params") or {})
    data = kwargs.get("data") if kwargs.get("data") is not None else kwargs.get("json")
    where = (
        f"{method} {kwargs['url']} params={kwargs.get('params')} "
        f"content-type={kwargs.get('headers', {}).get('Content-Type')} body={str(data)[:400]}"
    )
    c.requests += 1
    start = time.monotonic()
    try:
        resp = c.http.request(**kwargs, timeout=TIMEOUT, stream=True)
        if not watch or resp.status_code != 200:
            resp.content  # noqa: B018 - read the whole answer (under the timeout)
    except requests.Timeout:
        return problem(c, f"no answer within {TIMEOUT}s", where)
    except requests.ConnectionError as e:
        return problem(c, "connection dropped without a response", f"{where} -> {e}")
    finally:
        elapsed = time.monotonic() - start
    resp.close()
    c.codes[resp.status_code] = c.codes.get(resp.status_code, 0) + 1
    if elapsed > TIMEOUT:
        problem(c, f"answered after {elapsed:.1f}s", where)
    if watch and resp.status_code == 200:
        return
    if resp.status_code >= 500:
        try:
            text = resp.json().get("message", "")
        except ValueError:
            text = resp.text
        if resp.status_code == 504 and text.startswith("Timeout: Too large resource version: "):
            return  # upstream's answer too, for a resourceVersion ahead of the store
        if resp.status_code == 500 and text.startswith("Component not found: ") and "/componentstatuses/" in where:
            return  # upstream's componentstatus REST answers an unknown name with a plain error, a 500
        return problem(c, f"{resp.status_code}: {_shape(text)}", f"{where} -> {text[:600]}")
    if resp.status_code >= 400:
        try:
            body = resp.json()
        except ValueError:
            return problem(c, f"non-JSON {resp.status_code} body", f"{where} -> {resp.text[:300]}")
        if not isinstance(body, dict) or (
            body.get("kind"),
            body.get("apiVersion"),
            body.get("status"),
            body.get("code"),
        ) != ("Status", "v1", "Failure", resp.status_code):
            problem(c, f"improper Status for {resp.status_code}", f"{where} -> {str(body)[:300]}")


# request bodies with this many schemas reachable (the pod template carriers: ~115-135;
# the next largest, PersistentVolume, 37) take seconds per negative example to generate
HEAVY_BODY = 100


def _reachable(schemas: dict, name: str, seen: set) -> set:
    if name in seen:
        return seen
    seen.add(name)
    stack = [schemas.get(name, {})]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            ref = x.get("$ref")
            if isinstance(ref, str):
                _reachable(schemas, ref.rsplit("/", 1)[1], seen)
            stack.extend(v for k, v in x.items() if k != "$ref")
        elif isinstance(x, list):
            stack.extend(x)
    return seen


def _heavy_bodies(doc: dict) -> set[tuple[str, str]]:
    """(METHOD, path) of the operations whose request body is a pod template carrier."""
    schemas = doc.get("components", {}).get("schemas", {})
    out = set()
    for p, item in doc["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "requestBody" not in op:
                continue
            for media in op["requestBody"].get("content", {}).values():
                ref = media.get("schema", {}).get("$ref", "")
                if ref and len(_reachable(schemas, ref.rsplit("/", 1)[1], set())) > HEAVY_BODY:
                    out.add((method.upper(), p))
    return out


def _operations(c, document: str) -> tuple[list, set, object]:
    url = c.url + "/openapi/v3/" + document
    schema = schemathesis.openapi.from_url(url)
    ops = []
    for result in schema.get_all_operations():
        ops.append(result.ok())  # an operation schemathesis cannot read is a fidelity bug of the document
    return ops, _heavy_bodies(c.http.get(url).json()), schema


def _fuzz_operation(c, op, mode, fixed_body: bool) -> None:
    # a heavy body's negative examples break the parameters only (the body: an empty object)
    strategy = op.as_strategy(mode, body={}, media_type="application/json") if fixed_body else op.as_strategy(mode)

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy, pin=st.integers(0, 3), wire=st.integers(0, 3))
    def run(case, pin, wire):
        _pin(case, pin)
        fire(c, case, wire)

    try:
        run()
    except Unsatisfiable:  # nothing to break: an operation without parameters has no negative cases
        pass


def _coverage(c, schema, op) -> None:
    """schemathesis' coverage phase (MOCKKUBE_SCHEMATHESIS_COVERAGE=1, when hunting): every
    boundary value and wrong type of every parameter and body field, systematically; tens
    of thousands of requests per document, so not in the bounded run."""
    from schemathesis import GenerationMode

    config = schema.config.generation_for(operation=op, phase="coverage")
    for i, case in enumerate(
        schema.iter_coverage_cases(
            op, generation_modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], generation_config=config
        )
    ):
        _pin(case, 1 + i % 3)
        fire(c, case, i % 4)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_schemathesis(cluster, document):
    c = cluster
    ops, heavy, schema = _operations(c, document)
    assert ops
    from schemathesis import GenerationMode

    only = re.compile(os.environ.get("MOCKKUBE_FUZZ_OPS", ""))  # e.g. "DELETE .*/pods" when hunting
    for op in ops:
        if not only.search(f"{op.method.upper()} {op.path}"):
            continue
        c.operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            t0 = time.monotonic()
            _fuzz_operation(c, op, mode, mode == GenerationMode.NEGATIVE and (op.method.upper(), op.path) in heavy)
            if os.environ.get("MOCKKUBE_FUZZ_TIMES"):
                print(f"TIME {time.monotonic() - t0:6.2f} {mode.value} {op.method.upper()} {op.path}")
        if COVERAGE and (op.method.upper(), op.path) not in heavy:
            _coverage(c, schema, op)
    assert c.http.get(c.url + "/readyz").status_code == 200
    _sweep(c, document)
    found = dict(c.problems)
    c.problems.clear()
    if COLLECT:
        print(f"\n{document}: {len(ops)} operations, {c.requests} requests so far, codes {sorted(c.codes.items())}")
        for key, (n, example) in sorted(found.items()):
            print(f"\n[{n}x] {key}\n    e.g. {example}")
    assert not found, "\n".join(f"[{n}x] {k}\n    e.g. {e}" for k, (n, e) in sorted(found.items()))


def _sweep(c, document: str) -> None:
    """Every stored object of the document's kinds passes its kind's validation again:
    nothing invalid got in, nothing got corrupted."""
    from test_fuzz import stored_errors

    group = "" if document == "api/v1" else document.split("/")[1]
    version = document.rsplit("/", 1)[1]

    def sweep():
        for rt in RTS:
            if (rt.group, rt.version) != (group, version):
                continue
            for e in c.server.store.entries(rt):
                errs = stored_errors(rt, copy.deepcopy(e.obj))
                if errs:
                    problem(
                        c,
                        f"stored an invalid {rt.kind}: {_shape(errs[0])}",
                        f"{e.obj['metadata'].get('name')}: {errs[:3]}",
                    )

    c.call(sweep)
