// Package scalegen builds the large namespace the scale benchmark (make bench-scale) measures:
// N Deployments × M pods with a Service each, about a tenth of them broken the usual ways, some
// with a second revision. Load builds it on a real control plane, where kube-controller-manager
// creates the ReplicaSets, pods and EndpointSlices and kubeletsim.Steady plays scheduler and
// kubelet; WriteDump writes the same picture straight to disk in the layout `kubectl-diagnose
// dump` writes, with no cluster.
//
// The picture (Plan): workload i is healthy unless it is one of the BrokenFraction picked evenly
// through the list; the broken ones take the faults in turn:
//   - image: the image tag does not exist (ErrImagePull, ImagePullBackOff): never-starts, spec;
//   - crash: DATABASE_URL is missing, the program exits 1 at start (CrashLoopBackOff):
//     starts-and-dies, spec;
//   - upstream: the upstream it dials is unreachable, readiness answers 503 (Running, never
//     Ready): live-but-idle, dependency;
//   - selector: the Service selects a label no pod carries (Ready, no endpoints): live-but-idle,
//     spec.
//
// Every fifth healthy workload has a second, healthy revision (rollout complete), and every other
// image or crash fault arrives with a second revision while the first keeps serving (a stuck
// rollout). Pods settle in the formats of kubeletsim.Settle.
//
// Invariant: the same Options give the same picture, live or on disk, so a dump written by
// WriteDump diagnoses like the live namespace Load builds.
package scalegen
