// Package promtest is a test bed for the metrics source: a real Prometheus server (Debian's
// prometheus package, /usr/bin/prometheus, or $PROMETHEUS_BINARY) started on loopback with a
// generated config that scrapes an exporter the test runs, whose counters grow at the rates the
// test sets. Nothing here mocks the Prometheus API.
//
// Invariant: everything a test starts listens on 127.0.0.1 and is stopped by t.Cleanup.
package promtest
