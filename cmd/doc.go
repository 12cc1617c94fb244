// Package cmd is the command layer: cobra commands that turn flags into typed options, pick a
// source (a dump, a live cluster, the demo), run the engine and hand the result to a printer or
// the console.
//
// Invariant: flags stop here. diagnose/, tui/ and internal/ never see cobra or pflag, and no
// command calls os.Exit; every failure is returned as an error whose type decides the exit code
// (see ExitCode).
package cmd
