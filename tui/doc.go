// Package tui is the interactive console of kubectl-diagnose: a bubbletea program over a
// snapshot.Source and the diagnose engine.
//
// Invariants: Update and View perform no I/O (loading, watching, diagnosing and clipboard writes
// run in tea.Cmds that capture copies, never the model); every string that comes from the cluster
// passes through Sanitize before it is drawn, so a workload cannot drive the engineer's terminal;
// the workloads screen renders only the rows that are visible; the frame trace
// (FrameTraceEnv) only stamps times in Update and View and writes its file when Run returns. Words the audit table also shows
// (short suspect names, ages, causes, what a shape means, the worst-first order) come from
// internal/report, so the console and the printers never disagree.
package tui
