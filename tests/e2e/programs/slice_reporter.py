"""The test DRA driver's controller image: with the official Python client's in-cluster
configuration (KUBERNETES_SERVICE_HOST/PORT, the ServiceAccount's token and ca.crt), it
counts the driver's ResourceSlices and writes the count into a ConfigMap of its namespace,
again whenever it changes; an API error is printed and ends it (exit 1)."""

import os
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_incluster_config()
driver = os.environ["DRIVER_NAME"]
ns = open("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read()
name = os.environ.get("STATUS_CONFIGMAP", "driver-status")
core, resource = client.CoreV1Api(), client.ResourceV1Api()
last = None
while True:
    try:
        slices = [s for s in resource.list_resource_slice().items if s.spec.driver == driver]
        nodes = sorted({s.spec.node_name for s in slices if s.spec.node_name})
        data = {"slices": str(len(slices)), "nodes": ",".join(nodes)}
        if data != last:
            body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data)
            try:
                core.replace_namespaced_config_map(name, ns, body)
            except ApiException as e:
                if e.status != 404:
                    raise
                core.create_namespaced_config_map(ns, body)
            print(f"{len(slices)} slices of {driver} on {data['nodes']}", flush=True)
            last = data
    except ApiException as e:
        print(f"API error: {e.status} {e.reason}: {e.body}", file=sys.stderr, flush=True)
        sys.exit(1)
    time.sleep(0.5)
