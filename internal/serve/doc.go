// Package serve keeps a diagnosis of a cluster current and exposes it over HTTP for a fleet's
// Prometheus and Alertmanager: /metrics (per-workload series built at scrape time from the
// latest report), /report (the audit JSON), /healthz and /readyz.
//
// Invariant: the series come from one report, read under a lock at scrape time; nothing is
// kept per workload between reports, so a workload that is gone has no series, and every label
// but namespace and name takes its value from a closed vocabulary (shapes, causes, rule IDs).
package serve
