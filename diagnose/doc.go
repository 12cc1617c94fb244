// Package diagnose is the engine: pure functions from a snapshot to diagnoses.
//
// Invariant: diagnose performs no I/O. It holds no clients, reads no clock (the snapshot's
// reference time is "now"), writes no files and does no styling or logging.
//
// One reading: every pod status and condition, container state (with its times and exit
// code), controller condition, event, revision and log line of a workload is read once into
// its observation list (observe.go). Classification, evidence, the suspect rules, the onset,
// the timeline and the headline read that list, and the evidence items and suspects cite the
// observations they came from (Evidence.Observations, Suspect.Observations, indexes into
// Detail.Observations), so what a front end shows as evidence is what ranked the suspects.
// A copy's log tails are read into the list when a rule first asks for them: a healthy
// workload's logs are never read.
//
// Workloads are diagnosed by up to GOMAXPROCS workers; the report is the same whatever their
// number (parallel.go).
//
// Cost: linear in the size of the snapshot. A workload reads only what indexes hand it (its
// pods, events, logs, and the Services found by selector, name or label), never a scan of its
// namespace; each distinct log line is read once per workload however many copies log it.
// docs/performance.md has the numbers.
//
// Pods not seen: when the snapshot's visibility says the namespace's pods could not be read
// (forbidden to the identity, not in the dump), the counts and the shape come from the
// controller's status and conditions, and the headline says so. The shape agrees with
// sigs.k8s.io/cli-utils/pkg/kstatus/status, read on the typed object (controller_progress.go):
// Current is healthy, InProgress progressing (never-starts where ReplicaFailure or FailedCreate
// proves copies cannot be created), Failed (ProgressDeadlineExceeded) a failure shape read from
// the counts. Where copies exist and are not Ready the counts cannot tell a copy that never
// started from one that runs unready, and the headline and a CountsCannotTell evidence item
// say so. The engine says more than kstatus where the table in controller_kstatus_test.go
// lists why: a DaemonSet observed with desiredNumberScheduled 0 runs nowhere (never-starts,
// pods seen or not, or no-eligible-nodes when the label it selects is on no node: awaitsPool);
// a suspended CronJob or Job is suspended; no copy Ready for longer than a deadline that no controller will enforce
// is unknown, not progressing. Copies the controller reports beyond the pods a snapshot holds
// are unseen, never absent (controller_status.go).
//
// The closed vocabulary of the report:
//   - Shape: healthy, progressing, never-starts, starts-and-dies, live-but-idle, unknown,
//     no-eligible-nodes, suspended. The last two are intended states (Shape.Intended): the spec
//     asks for what the workload does, nothing fails, and they are neither Broken nor healthy.
//     no-eligible-nodes is a DaemonSet no node may run because every requirement no node
//     meets names a label no node carries and no near miss (a typo) of one they do: a node pool
//     not there yet. A typo, labels that exist but on no one node, taints on the nodes it
//     selects, or nodes not seen stay never-starts. suspended is a CronJob or Job whose
//     spec.suspend holds its runs back (a Job of it still running stays progressing, one that
//     failed keeps its failure). Both list the field that holds them as a suspect; their cause
//     is unknown.
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
//     visibility (what the source could not read), metrics (the workload's own output),
//     workloads (the other workloads of the report: a SharedDependency item, shared.go).
//   - Waiver: the workload annotation kubediagnose.dev/waive (`SHAPE or RULE[, ...]; REASON`, a
//     line each) waives the verdict it names (waiver.go); the verdict is unchanged, and
//     Diagnosis.Waived carries what it named and why, so front ends mark it and --fail-on
//     leaves it out.
//   - ThroughputVerdict: steady, zero, fell, no-data. A zero or fallen throughput while every
//     copy is Ready turns a healthy workload live-but-idle (throughput.go); a backlog rising at
//     full count is a capacity finding in the throughput section, not a shape.
package diagnose
