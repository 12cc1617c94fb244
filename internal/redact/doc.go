// Package redact keeps the credentials a cluster's objects and logs happen to hold out of what
// kubectl-diagnose prints and serves.
//
// It holds the rules (which names, values and text fragments are credentials: rules.go) and
// one pass that applies them where the engine's answer meets the front ends (Report,
// Diagnosis), plus a Scope for the few places the console shows a workload's raw data (its pod
// template, logs and events). A redacted value reads "[redacted:3f2a]": the four hex digits are
// an HMAC of the value under a key drawn once per Redactor, so equal values in one output (a
// suspect's value and its previous value, the same password in two log lines) stay recognisably
// equal, and the mark says nothing of the value to anyone who does not hold the key.
//
// Invariants: the engine (package diagnose) never sees a redacted value, so diffs and matches
// are made on the real ones; the pass never changes the values it is given (it copies what it
// redacts); a nil *Redactor redacts nothing (--show-secrets); applying the pass to its own
// output changes nothing, so a report that holds diagnoses kept from a redacted one can be
// passed again.
//
// Detail.Copies and Detail.Observations are written out by the engine on demand, and writing
// them for every workload would cost what the engine saved by not keeping them: the pass leaves
// them, and the one front end that prints a copy's message (the console's Copies tab) passes
// it through the workload's Scope.
package redact
