// Package diagnose is the engine: pure functions from a snapshot to diagnoses.
//
// Invariant: diagnose performs no I/O. It holds no clients, reads no clock (the snapshot's
// reference time is "now"), writes no files and does no styling or logging.
//
// Cost: linear in the size of the snapshot. A workload reads only what indexes hand it (its
// pods, events, logs, and the Services found by selector, name or label), never a scan of its
// namespace; each distinct log line is read once per workload however many copies log it.
// BENCHMARKS.md has the numbers.
//
// Pods not seen: when the snapshot's visibility says the namespace's pods could not be read
// (forbidden to the identity, not in the dump), the counts and the shape come from the
// controller's status and conditions, and the headline says so: healthy when every declared
// copy is available at the observed generation, progressing inside the deadline, never-starts
// on ReplicaFailure or FailedCreate, on ProgressDeadlineExceeded with no new copy Ready (some
// Ready: live-but-idle), unknown otherwise. Copies the controller reports beyond the pods a
// snapshot holds are unseen, never absent. A DaemonSet observed with desiredNumberScheduled 0
// runs nowhere: never-starts, pods seen or not (controller_status.go).
//
// The closed vocabulary of the report:
//   - Shape: healthy, progressing, never-starts, starts-and-dies, live-but-idle, unknown.
//     progressing is a rollout inside its deadline that is making progress or has not yet
//     had time to: a rollout whose new copies all ran past their own probes' allowance
//     (initialDelaySeconds + failureThreshold×periodSeconds, plus 30 s for the status and
//     EndpointSlice writes) without one becoming Ready, with a failure signal on them (error
//     log lines, a readiness probe on an undeclared port), takes the failing shape at once.
//     A progressing row lists suspects, all at low confidence, only when its not-yet-serving
//     new copies show such a signal; its cause stays unknown.
//   - Cause: spec, dependency, unknown.
//   - Confidence: high, medium, low.
//   - EvidenceSource: pod-status, event, log, revision-history, service, controller-status,
//     visibility (what the source could not read).
package diagnose
