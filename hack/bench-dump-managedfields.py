#!/usr/bin/env python3
"""Copies a dump directory (the benchmark dump's dir/) and writes managedFields into every pod
as an API server keeps them: the controller-manager's entry for metadata and spec, the
kubelet's for status, each a FieldsV1 tree of the fields the pod has. kubectl cluster-info dump
keeps managedFields; the benchmark dump, written from a snapshot, has none.
Usage: hack/bench-dump-managedfields.py SRC_DIR DST_DIR"""
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
def fields(v):
    if isinstance(v, dict):
        return {"f:"+k: fields(x) for k, x in v.items()}
    if isinstance(v, list):
        out = {}
        for i, x in enumerate(v):
            if isinstance(x, dict) and "name" in x:
                out['k:{"name":"%s"}' % x["name"]] = fields({k: y for k, y in x.items() if k != "name"})
            else:
                out["v:%s" % json.dumps(x, sort_keys=True)[:40]] = {}
        return out
    return {}
for root, ds, fs in os.walk(src):
    for f in fs:
        p = os.path.join(root, f); q = os.path.join(dst, os.path.relpath(p, src))
        os.makedirs(os.path.dirname(q), exist_ok=True)
        d = json.load(open(p))
        for it in (d.get("items") or []):
            if it.get("kind", d.get("kind","")).startswith("Pod") or f == "pods.json":
                md = it["metadata"]; t = md.get("creationTimestamp", "2026-11-24T10:00:00Z")
                md["managedFields"] = [
                    {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:metadata": fields({k: md[k] for k in ("labels", "ownerReferences", "generateName") if k in md}), "f:spec": fields(it.get("spec", {}))}},
                    {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1",
                     "fieldsV1": {"f:status": fields(it.get("status", {}))}, "subresource": "status"}]
        with open(q, "w") as o:
            json.dump(d, o, indent=4); o.write("\n")
