// Package facts is the engine's one reading of what a workload's objects say.
//
// Every observation (a log line, an event, a container state, a condition) is classified
// here and nowhere else: whether it signals a failure, which failure (a key that stays the
// same however the copies, levels and encodings word its variable parts), how severe, and
// which values it names (hosts, ports, URLs, paths, flags, variables). Shape, suspects,
// evidence, onset and cause read that verdict; none of them has a failure test of its own,
// so what a front end shows as evidence is what the rules read.
//
// A line's level alone decides nothing: `WARN dial tcp 10.0.0.7:9443: connection refused,
// retrying` is a failure signal, and `ERROR` on a line is a failure whatever it says, but a
// warning that names no failure ("config key deprecated") is not one, and an info line that
// says "connection refused" is.
//
// Invariant: pure functions of their inputs; no I/O, no clock, no global state that changes.
package facts
