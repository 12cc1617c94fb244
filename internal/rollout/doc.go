// Package rollout follows one workload's rollout and decides, as early as the evidence allows,
// whether its new revision serves, has failed, or ran out of time.
//
// The decision (Decider) is pure: it reads the controller's rollout status, as `kubectl rollout
// status` does, and the engine's diagnosis of the workload at a reference time, and keeps only
// the time the workload has looked done. The loop (Gate) feeds it snapshots from a watch and
// re-reads the latest one as the clock moves, since warm-up windows and the settle period are
// measured against the reference time. Neither writes to the cluster.
package rollout
