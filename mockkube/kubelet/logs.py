"""Container logs for ``kubectl logs`` (the pods/log subresource).

Simulated containers run nothing, so a container's log is what its pod declares in the
annotation ``mockkube.io/log.<container>`` (or ``mockkube.io/log`` for every container):
the text it "printed", one line per line. Without the annotation, a container whose
command the exec shell can answer (``echo hi``, ``sh -c 'echo $JOB_COMPLETION_INDEX'``,
``printenv``) logs what that command prints (mockkube/kubelet/shell.py). Errors follow the kubelet's and apiserver's
wording for containers that are unknown, ambiguous or not started yet.
"""

from __future__ import annotations

from mockkube.kubelet.lifecycle import annotation
from mockkube.machinery import errors


def _names(pod: dict, key: str) -> list[str]:
    return [c.get("name", "") for c in (pod.get("spec") or {}).get(key) or [] if isinstance(c, dict)]


def pick_container(pod: dict, container: str) -> str:
    """The container a log request means: the named one, the only one, or the
    ``kubectl.kubernetes.io/default-container`` annotation's."""
    name = pod["metadata"]["name"]
    regular = _names(pod, "containers")
    every = regular + _names(pod, "initContainers") + _names(pod, "ephemeralContainers")
    if not container:
        default = (pod["metadata"].get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
        if default in every:
            return default
        if len(regular) == 1:
            return regular[0]
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(regular)}]"
        )
    if container not in every:
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    return container


def container_log(pod: dict, container: str, tail_lines: int | None = None, timestamps: bool = False) -> str:
    """The log text of one container; 400 (as upstream) while it has not started."""
    name = pod["metadata"]["name"]
    statuses = [
        s
        for key in ("containerStatuses", "initContainerStatuses")
        for s in (pod.get("status") or {}).get(key) or []
        if s.get("name") == container
    ]
    state = (statuses[0].get("state") or {}) if statuses else {}
    started = (state.get("running") or {}).get("startedAt") or (state.get("terminated") or {}).get("startedAt")
    if not started:
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    text = annotation(pod, "log", container)
    if text is None:
        text = command_output(pod, container)
    lines = text.splitlines()
    if tail_lines is not None and tail_lines >= 0:
        lines = lines[len(lines) - tail_lines :] if tail_lines else []
    if timestamps:
        stamp = started.replace("Z", ".000000000Z") if started.endswith("Z") and "." not in started else started
        lines = [f"{stamp} {line}" for line in lines]
    return "".join(line + "\n" for line in lines)


def command_output(pod: dict, container: str) -> str:
    """What the container's command and args print when the simulated shell knows every
    command in them and they succeed; "" otherwise (an image's own entrypoint is unknown)."""
    from mockkube.kubelet.containerdata import simulated_container
    from mockkube.kubelet.shell import Shell

    spec = next(
        (
            c
            for key in ("containers", "initContainers")
            for c in (pod.get("spec") or {}).get(key) or ()
            if isinstance(c, dict) and c.get("name") == container
        ),
        None,
    )
    argv = [str(a) for a in list((spec or {}).get("command") or ()) + list((spec or {}).get("args") or ())]
    if not argv:
        return ""
    out: list[bytes] = []

    async def write(channel: int, data: bytes) -> None:
        out.append(data)

    import time

    coro = Shell(simulated_container(pod, spec, time.time), write).exec(argv)
    try:
        coro.send(None)  # the shell only awaits our write: it runs to the end in one step
    except StopIteration as done:
        return b"".join(out).decode(errors="replace") if done.value == 0 else ""
    coro.close()  # it waited on something real (a sleep): no output to report
    return ""
