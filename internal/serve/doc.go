// Package serve keeps a diagnosis of a cluster current and exposes it over HTTP for a fleet's
// Prometheus and Alertmanager: /metrics (per-workload series built at scrape time from the
// latest report), /report (the audit JSON, when asked for, to the callers a Reviewer lets in,
// each reading the namespaces the cluster lets it read), /healthz and /readyz.
//
// Invariants: the series come from one report, read under a lock at scrape time; nothing is
// kept per workload between reports, so a workload that is gone has no series, and every label
// but namespace and name takes its value from a closed vocabulary (shapes, causes, rule IDs).
// Every report the picture holds went through the redaction pass (internal/redact): the server
// has no way to show a credential. Its only requests to the API server besides the source's
// reads are the TokenReviews and SubjectAccessReviews of /report's callers.
package serve
