// Package rules holds the suspect rules: each family, one file, declares its rules (stable ID,
// title, the signal it reads, the fix hint) and the one detector that finds them, and registers
// them as one value (register). The catalogue, docs/rules.md and the engine range over the
// families.
//
// A detector reads one narrow Input (the workload's classified signals and copies, its pod
// template and the objects it refers to) and records suspects through a Sink; it never sees
// the workload the engine works on, nor the snapshot. Package diagnose fills the Input, is
// the Sink, and ranks what the families found.
//
// Invariant: no I/O, no clock; the only package state is the registry, written while the
// package's variables are initialized.
package rules
