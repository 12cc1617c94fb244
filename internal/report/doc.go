// Package report renders diagnoses for people and programs: the audit table (and its wide
// form), markdown for auditors, JSON and YAML in the documented report schema, and the plain
// text of one workload's explanation.
//
// Invariant: printers only format. They never diagnose, never read a clock (ages come from the
// report), and never emit colour or terminal escape sequences; text that came from a cluster is
// stripped of escape sequences, control characters and bidi overrides (Clean) before a human
// format writes it. The console (tui) takes its cleaner and its shared words from here.
package report
