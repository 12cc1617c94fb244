package cmd

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// Exit codes of kubectl-diagnose.
const (
	ExitOK       = 0
	ExitError    = 1 // could not run: unreadable dump, unreachable cluster
	ExitUsage    = 2 // bad flags or arguments
	ExitFailedOn = 3 // a workload matched --fail-on
	// ExitRolloutFailed: rollout saw the new revision's copies take a failure shape, or the
	// controller gave up on it (ProgressDeadlineExceeded).
	ExitRolloutFailed = 4
	// ExitTimedOut: rollout reached --timeout undecided.
	ExitTimedOut = 5
	// ExitInterrupted: Ctrl-C (or SIGTERM) before a verdict, as a shell reports SIGINT.
	ExitInterrupted = 130
)

// UsageError is a bad flag, argument or flag value; it exits 2.
type UsageError struct {
	Err error
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// FailOnError says workloads matched --fail-on; it exits 3. The report has been printed.
type FailOnError struct {
	// Matched counts the matching workloads by shape.
	Matched map[diagnose.Shape]int
	// Contexts, for a fleet, are the contexts the matching workloads are in.
	Contexts []string
}

func (e *FailOnError) Error() string {
	total := 0
	parts := make([]string, 0, len(e.Matched))
	for s, n := range e.Matched {
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(parts)
	noun := "workloads match"
	if total == 1 {
		noun = "workload matches"
	}
	msg := fmt.Sprintf("%d %s --fail-on: %s", total, noun, strings.Join(parts, ", "))
	switch len(e.Contexts) {
	case 0:
	case 1:
		msg += " (in context " + e.Contexts[0] + ")"
	default:
		msg += " (in contexts " + strings.Join(e.Contexts, ", ") + ")"
	}
	return msg
}

// RolloutFailedError says the followed rollout failed; it exits 4. The diagnosis has been printed.
type RolloutFailedError struct {
	// Workload is KIND/NAME as kubectl writes it; Why is the failure shape or
	// ProgressDeadlineExceeded.
	Workload, Why string
}

func (e *RolloutFailedError) Error() string {
	return fmt.Sprintf("rollout of %s failed: %s", e.Workload, e.Why)
}

// RolloutTimeoutError says the followed rollout was undecided at --timeout; it exits 5. The state
// at that moment has been printed.
type RolloutTimeoutError struct {
	Workload string
	Timeout  time.Duration
}

func (e *RolloutTimeoutError) Error() string {
	return fmt.Sprintf("rollout of %s undecided after --timeout %s", e.Workload, e.Timeout)
}

// Interrupted is the cause the root context is cancelled with when a signal stops the command;
// it exits 128 plus the signal's number, as a shell reports a process the signal killed (130 for
// Ctrl-C, 143 for SIGTERM).
type Interrupted struct {
	Signal syscall.Signal
}

func (e *Interrupted) Error() string {
	// Named by hand: golang.org/x/sys/unix has the names but does not build for Windows.
	switch e.Signal {
	case syscall.SIGINT:
		return "interrupted by SIGINT"
	case syscall.SIGTERM:
		return "interrupted by SIGTERM"
	}
	return "interrupted by " + e.Signal.String()
}

// InterruptedError says a signal ended the command before it decided; it exits 130.
type InterruptedError struct{}

func (e *InterruptedError) Error() string { return "interrupted before a verdict" }

// ExitCode maps an error returned by the root command to the process exit code.
func ExitCode(err error) int {
	var usage *UsageError
	var failOn *FailOnError
	var failed *RolloutFailedError
	var timedOut *RolloutTimeoutError
	var interrupted *InterruptedError
	var intr *Interrupted
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &intr):
		return 128 + int(intr.Signal)
	case errors.As(err, &failOn):
		return ExitFailedOn
	case errors.As(err, &failed):
		return ExitRolloutFailed
	case errors.As(err, &timedOut):
		return ExitTimedOut
	case errors.As(err, &interrupted):
		return ExitInterrupted
	case errors.As(err, &usage):
		return ExitUsage
	}
	return ExitError
}
