// Package metrics is the read-only Prometheus source: for each workload of a snapshot it picks
// the query that measures the workload's own output (its annotation, a config file rule, or a
// short list of common request counters), runs it as a range query over a window ending at the
// snapshot's reference time, and records the answer in the snapshot as the API returned it.
//
// Invariant: only instant and range queries are sent, each with its own timeout; a Prometheus
// that cannot be reached or does not answer in time becomes a visibility entry of the
// snapshot, never an error of the read, so the diagnosis goes on without it.
package metrics
