// Package kubeletsim plays kube-scheduler and the kubelets of fake nodes against a real API
// server, the way kwok does, so that tests see pods, statuses and events with the reasons and
// message formats of Kubernetes v1.37.2 and containerd 2.x without a container runtime.
//
// What it writes, and where the formats come from:
//   - Nodes with capacity, labels, taints, the kubelet's conditions, a Lease heartbeat and
//     status.daemonEndpoints pointing at a loopback HTTPS endpoint that serves
//     /containerLogs/{namespace}/{pod}/{container} (tailLines, limitBytes, previous, timestamps,
//     sinceSeconds, sinceTime), so `pods/log` works through the API server.
//   - Scheduling: the binding subresource; the default profile's filters in order
//     (NodeUnschedulable, TaintToleration, NodeAffinity with nodeSelector and required terms,
//     NodeResourcesFit requests vs allocatable); otherwise the FitError message with the
//     preemption suffix (pkg/scheduler/framework/types.go, defaultpreemption), a FailedScheduling
//     events.k8s.io/v1 Event (a series at count 2, then on its 30-minute refresh) and the
//     PodScheduled=False/Unschedulable condition. Before the filters, VolumeBinding's PreFilter:
//     a missing, lost or deleting claim, or an unbound claim of immediate binding mode ("pod has
//     unbound immediate PersistentVolumeClaims"), keeps the pod off every node. Unschedulable
//     pods are retried every 5 minutes (podMaxInUnschedulablePodsDuration) or when their spec
//     changes.
//   - Kubelet: pod status (condition order and reasons, container statuses, image and imageID as
//     containerd reports them), core/v1 Events from source kubelet with the legacy recorder's
//     counting and spam filter, pulls with back-off 10 s doubling to 300 s (ErrImagePull,
//     ImagePullBackOff, containerd's NotFound, "pull access denied" and DNS messages),
//     CreateContainerConfigError for missing Secrets, ConfigMaps and keys (kubelet_pods.go),
//     FailedMount for missing secret/configMap volumes, readiness and liveness probes against
//     the simulated program (HTTP status codes, connection refused), startup probes gating them,
//     kills on liveness and startup failures, restarts with
//     CrashLoopBackOff back-off 10 s doubling to 5m0s, OOMKilled (137) when the program's memory
//     exceeds the limit, and graceful deletion.
//
// What a container does is decided by a World: which image references the registries resolve
// (and which need a pull secret), which registries are down, which endpoints accept
// connections, and per image a Program (ports, health paths, the upstream it dials from an env
// var, required env, memory, exit, log lines). The World may change while the simulation runs,
// e.g. World().SetReachable("telemetry-intake.internal:8443", false) makes every pod of that
// program fail readiness with 503 at its next probe, under an unchanged spec.
//
// Time is accelerated by Options.TimeScale (default 10): back-offs, probe periods, heartbeats
// and program delays run that many times faster than their nominal values; timestamps are real
// wall-clock times and messages keep the nominal durations.
//
// Not modelled: claims in WaitForFirstConsumer mode (they pass, as if a volume were found for
// the chosen node), volume attach and mount of claims, exec probes (they pass), restartable
// init containers (run like ordinary ones), preemption (never happens), the
// EventAggregator's combining of similar events, and every node sharing InternalIP 127.0.0.1
// (the pods' hostIP) because the API server must reach the log endpoint on loopback.
//
// Usage:
//
//	w := kubeletsim.NewWorld().
//		SetImage("registry.example/app:1.0", kubeletsim.Image{Program: kubeletsim.Program{Ports: []int32{8080}}})
//	sim, err := kubeletsim.New(cfg, w, kubeletsim.Options{Nodes: kubeletsim.DefaultNodes("t1", 3), Namespaces: []string{ns}})
//	if err := sim.Start(ctx); err != nil { ... }
//	defer sim.Stop()
//
// Invariant: the simulation only writes what a scheduler and kubelets write (bindings, pod
// and node status, leases, events, and the final deletion of a pod being deleted gracefully),
// and only for pods in its namespaces on its own nodes. It may read Secrets and ConfigMaps; the
// tool under test must not.
package kubeletsim
