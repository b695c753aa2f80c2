"""Pure Deployment/ReplicaSet arithmetic (upstream pkg/controller/deployment/util and
pkg/controller/controller_utils): template hashing, surge/unavailable fenceposts, revision
and replica annotations, proportional scaling, status and conditions. No I/O, no clock:
``now`` (epoch seconds) is passed in.
"""

from __future__ import annotations

import json
import math
from typing import Iterable

from mockkube.machinery import meta

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_NOT_COPIED = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)

# condition reasons (pkg/controller/deployment/util/deployment_util.go)
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
FAILED_RS_CREATE = "ReplicaSetCreateError"

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand alphanums


# --- small accessors --------------------------------------------------------------------------


def replicas(obj: dict | None) -> int:
    """spec.replicas (defaulted to 1 by the API server; 0 for a missing object)."""
    if obj is None:
        return 0
    v = (obj.get("spec") or {}).get("replicas")
    return 1 if v is None else int(v)


def status_int(obj: dict | None, field: str) -> int:
    return int(((obj or {}).get("status") or {}).get(field) or 0)


def annotations(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("annotations") or {}


def creation_key(obj: dict) -> tuple[str, str]:
    """ReplicaSetsByCreationTimestamp: oldest first, then by name."""
    m = obj.get("metadata") or {}
    return (m.get("creationTimestamp") or "", m.get("name") or "")


def by_creation(rss: Iterable[dict]) -> list[dict]:
    return sorted(rss, key=creation_key)


def active(rss: Iterable[dict | None]) -> list[dict]:
    """FilterActiveReplicaSets: those with spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def sum_spec(rss: Iterable[dict | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def sum_status(rss: Iterable[dict | None], field: str) -> int:
    return sum(status_int(rs, field) for rs in rss if rs is not None)


# --- intstr / fenceposts ----------------------------------------------------------------------


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, ``"N%"`` of ``total`` rounded."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    s = str(value)
    if not s.endswith("%"):
        try:
            return int(s)
        except ValueError:
            raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage") from None
    pct = int(s[:-1])
    exact = pct * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def _rolling(d: dict) -> dict | None:
    strat = (d.get("spec") or {}).get("strategy") or {}
    if strat.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    return strat.get("rollingUpdate") or {"maxSurge": "25%", "maxUnavailable": "25%"}


def resolve_fenceposts(max_surge, max_unavailable, desired: int) -> tuple[int, int]:
    """Surge rounds up, unavailability down; both zero would deadlock, so unavailable = 1."""
    surge = scaled_value(max_surge if max_surge is not None else 0, desired, True)
    unavailable = scaled_value(max_unavailable if max_unavailable is not None else 0, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling_update(d: dict) -> bool:
    return _rolling(d) is not None


def max_surge(d: dict) -> int:
    ru = _rolling(d)
    if ru is None:
        return 0
    return resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), replicas(d))[0]


def max_unavailable(d: dict) -> int:
    ru = _rolling(d)
    if ru is None or replicas(d) == 0:
        return 0
    unavailable = resolve_fenceposts(ru.get("maxSurge"), ru.get("maxUnavailable"), replicas(d))[1]
    return min(unavailable, replicas(d))


# --- template hash and equality ---------------------------------------------------------------


def _fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def _normal_template(tpl: dict | None) -> dict:
    t = meta.clone(tpl or {})
    m = t.get("metadata")
    if isinstance(m, dict):
        for k in [k for k, v in m.items() if v is None or v == {}]:
            del m[k]
        if not m:
            del t["metadata"]
    return t


def compute_hash(template: dict, collision_count: int | None) -> str:
    """controller.ComputeHash: FNV-32a of the template (here its canonical JSON; upstream
    hashes Go's object dump, so values differ from a real cluster's but are as stable),
    plus the collision count, encoded with rand.SafeEncodeString."""
    data = json.dumps(_normal_template(template), sort_keys=True, separators=(",", ":")).encode()
    h = _fnv32a(data)
    if collision_count is not None:
        h = _fnv32a(int(collision_count).to_bytes(4, "little", signed=False), h)
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def equal_ignore_hash(t1: dict | None, t2: dict | None) -> bool:
    """Two pod templates are the same apart from the pod-template-hash label."""
    a, b = _normal_template(t1), _normal_template(t2)
    for t in (a, b):
        labels = (t.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(HASH_LABEL, None)
            if not labels:
                del t["metadata"]["labels"]
                if not t["metadata"]:
                    del t["metadata"]
    return a == b


def find_new_rs(d: dict, rss: Iterable[dict]) -> dict | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's."""
    tpl = (d.get("spec") or {}).get("template")
    for rs in by_creation(rss):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), tpl):
            return rs
    return None


# --- revisions and annotations ----------------------------------------------------------------


def revision(obj: dict) -> int:
    try:
        return int(annotations(obj).get(REVISION, "0") or 0)
    except ValueError:
        return 0


def max_revision(rss: Iterable[dict]) -> int:
    return max((revision(rs) for rs in rss), default=0)


def set_replicas_annotations(rs: dict, desired: int, max_total: int) -> bool:
    """SetReplicasAnnotations on a clone; True when something changed."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, val in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_total))):
        if ann.get(key) != val:
            ann[key] = val
            changed = True
    return changed


def set_new_rs_annotations(d: dict, rs: dict, new_revision: int, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations on a clone: copy the Deployment's annotations, raise the
    revision (keeping the old one in revision-history), and for a new RS the replica
    annotations. True when something changed."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in annotations(d).items():
        if k in _NOT_COPIED:
            continue
        if ann.get(k) != v:
            ann[k] = v
            changed = True
    old = ann.get(REVISION, "")
    try:
        old_int = int(old) if old else 0
    except ValueError:
        return changed
    if old_int < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if old:
            hist = ann.get(REVISION_HISTORY)
            ann[REVISION_HISTORY] = f"{hist},{old}" if hist else old
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    if not ann:
        del rs["metadata"]["annotations"]
    return changed


def desired_annotation(rs: dict) -> int | None:
    try:
        return int(annotations(rs)[DESIRED_REPLICAS])
    except (KeyError, ValueError):
        return None


def max_replicas_annotation(rs: dict) -> int | None:
    try:
        return int(annotations(rs)[MAX_REPLICAS])
    except (KeyError, ValueError):
        return None


# --- scaling arithmetic -----------------------------------------------------------------------


def new_rs_new_replicas(d: dict, all_rss: Iterable[dict | None], new_rs: dict) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now (bounded by maxSurge)."""
    if _rolling(d) is None:
        return replicas(d)
    current = sum_spec(all_rss)
    max_total = replicas(d) + max_surge(d)
    if current >= max_total:
        return replicas(new_rs)
    grow = min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(new_rs) + grow


def is_saturated(d: dict, rs: dict | None) -> bool:
    if rs is None:
        return False
    return (
        replicas(rs) == replicas(d)
        and desired_annotation(rs) == replicas(d)
        and status_int(rs, "availableReplicas") == replicas(d)
    )


def find_active_or_latest(new_rs: dict | None, old_rss: list[dict]) -> dict | None:
    """The only active ReplicaSet, or the newest one when none is active; None when several are."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=creation_key, reverse=True)
    live = active(newest_first + [new_rs])
    if not live:
        return new_rs if new_rs is not None else newest_first[0]
    return live[0] if len(live) == 1 else None


def rs_fraction(rs: dict, d: dict) -> int:
    """getReplicaSetFraction: this RS's share of a Deployment resize."""
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_replicas = replicas(d) + max_surge(d)
    annotated = max_replicas_annotation(rs)
    if annotated is None:
        annotated = status_int(d, "replicas")
    if annotated == 0:
        return 0
    new_size = replicas(rs) * deployment_replicas / annotated
    return int(math.floor(new_size + 0.5)) - replicas(rs)


def proportion(rs: dict | None, d: dict, to_add: int, added: int) -> int:
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = rs_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def proportional_sizes(d: dict, new_rs: dict | None, old_rss: list[dict]) -> dict[str, int]:
    """The rolling-update branch of ``scale``: spread a resize over the active ReplicaSets,
    largest first (newer first when growing, older first when shrinking), the rounding
    leftover going to the first."""
    rss = active(old_rss + [new_rs])
    total = sum_spec(rss)
    allowed = replicas(d) + max_surge(d) if replicas(d) > 0 else 0
    to_add = allowed - total
    if to_add > 0:
        rss.sort(key=creation_key, reverse=True)
        rss.sort(key=replicas, reverse=True)
    elif to_add < 0:
        rss.sort(key=creation_key)
        rss.sort(key=replicas, reverse=True)
    sizes: dict[str, int] = {}
    added = 0
    for rs in rss:
        p = proportion(rs, d, to_add, added) if to_add != 0 else 0
        sizes[rs["metadata"]["name"]] = replicas(rs) + p
        added += p
    if rss and added != to_add:
        first = rss[0]["metadata"]["name"]
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes


# --- conditions -------------------------------------------------------------------------------


def new_condition(type_: str, status: str, reason: str, message: str, now: float) -> dict:
    ts = meta.rfc3339(now)
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": ts,
        "lastTransitionTime": ts,
        "reason": reason,
        "message": message,
    }


def get_condition(status: dict, type_: str) -> dict | None:
    for c in status.get("conditions") or ():
        if c.get("type") == type_:
            return c
    return None


def set_condition(status: dict, cond: dict) -> None:
    """SetDeploymentCondition: no change for the same status and reason; the transition
    time survives a change of reason only."""
    cur = get_condition(status, cond["type"])
    if cur is not None and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return
    cond = dict(cond)
    if cur is not None and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]] + [cond]


def remove_condition(status: dict, type_: str) -> None:
    conds = [c for c in status.get("conditions") or () if c.get("type") != type_]
    if conds:
        status["conditions"] = conds
    else:
        status.pop("conditions", None)


# --- status -----------------------------------------------------------------------------------


def calculate_status(all_rss: list[dict | None], new_rs: dict | None, d: dict, now: float) -> dict:
    """calculateStatus: counts from the ReplicaSets, the Available condition from
    maxUnavailable. Zero counts are left out, as the Go encoder's omitempty does."""
    rss = [rs for rs in all_rss if rs is not None]
    available = sum_status(rss, "availableReplicas")
    unavailable = max(0, sum_spec(rss) - available)
    old = d.get("status") or {}
    st: dict = {
        "observedGeneration": (d.get("metadata") or {}).get("generation", 0),
        "replicas": sum_status(rss, "replicas"),
        "updatedReplicas": status_int(new_rs, "replicas") if new_rs is not None else 0,
        "readyReplicas": sum_status(rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
    }
    st = {k: v for k, v in st.items() if v}
    terminating = [(rs.get("status") or {}).get("terminatingReplicas") for rs in rss]
    if any(t is not None for t in terminating):
        st["terminatingReplicas"] = sum(t or 0 for t in terminating)
    if old.get("conditions"):
        st["conditions"] = meta.clone(old["conditions"])
    if old.get("collisionCount") is not None:
        st["collisionCount"] = old["collisionCount"]
    if available >= replicas(d) - max_unavailable(d):
        set_condition(
            st, new_condition("Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now)
        )
    else:
        set_condition(
            st,
            new_condition("Available", "False", MIN_UNAVAILABLE, "Deployment does not have minimum availability.", now),
        )
    return st


def has_progress_deadline(d: dict) -> bool:
    pds = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return pds is not None and pds != 2**31 - 1


def deployment_complete(d: dict, st: dict) -> bool:
    n = replicas(d)
    return (
        st.get("updatedReplicas", 0) == n
        and st.get("replicas", 0) == n
        and st.get("availableReplicas", 0) == n
        and st.get("observedGeneration", 0) >= (d.get("metadata") or {}).get("generation", 0)
    )


def deployment_progressing(d: dict, st: dict) -> bool:
    old = d.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = st.get("replicas", 0) - st.get("updatedReplicas", 0)
    return (
        st.get("updatedReplicas", 0) > old.get("updatedReplicas", 0)
        or new_old < old_old
        or st.get("readyReplicas", 0) > old.get("readyReplicas", 0)
        or st.get("availableReplicas", 0) > old.get("availableReplicas", 0)
    )


def progress_deadline_at(d: dict, st: dict) -> float | None:
    """When the Progressing condition times out (None when it cannot)."""
    if not has_progress_deadline(d):
        return None
    cond = get_condition(st, "Progressing")
    if cond is None or cond.get("reason") in (NEW_RS_AVAILABLE, TIMED_OUT) or not cond.get("lastUpdateTime"):
        return None
    return meta.parse_time(cond["lastUpdateTime"]) + int(d["spec"]["progressDeadlineSeconds"])


def deployment_timed_out(d: dict, st: dict, now: float) -> bool:
    cond = get_condition(st, "Progressing")
    if cond is not None and cond.get("reason") == TIMED_OUT:
        return True
    at = progress_deadline_at(d, st)
    return at is not None and at < now


def rollout_status(all_rss: list[dict | None], new_rs: dict | None, d: dict, now: float) -> dict:
    """syncRolloutStatus's computation: calculateStatus plus the Progressing condition."""
    st = calculate_status(all_rss, new_rs, d, now)
    if not has_progress_deadline(d):
        remove_condition(st, "Progressing")
        return st
    cur = get_condition(st, "Progressing")
    complete = (
        st.get("replicas", 0) == st.get("updatedReplicas", 0)
        and cur is not None
        and cur.get("reason") == NEW_RS_AVAILABLE
    )
    if complete:
        return st
    rs_name = new_rs["metadata"]["name"] if new_rs is not None else None
    if deployment_complete(d, st):
        msg = (
            f'ReplicaSet "{rs_name}" has successfully progressed.'
            if rs_name
            else "Deployment has successfully progressed."
        )
        set_condition(st, new_condition("Progressing", "True", NEW_RS_AVAILABLE, msg, now))
    elif deployment_progressing(d, st):
        msg = f'ReplicaSet "{rs_name}" is progressing.' if rs_name else "Deployment is progressing."
        cond = new_condition("Progressing", "True", RS_UPDATED, msg, now)
        if cur is not None and cur.get("status") == "True":
            cond["lastTransitionTime"] = cur.get("lastTransitionTime")
        remove_condition(st, "Progressing")
        set_condition(st, cond)
    elif deployment_timed_out(d, st, now):
        msg = (
            f'ReplicaSet "{rs_name}" has timed out progressing.' if rs_name else "Deployment has timed out progressing."
        )
        set_condition(st, new_condition("Progressing", "False", TIMED_OUT, msg, now))
    return st
