package diagnose

import (
	"errors"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// ErrCanceled is returned by Until when done closed before the report was complete.
var ErrCanceled = errors.New("diagnosis canceled")

// Until is Diagnose that gives up when done closes: it checks done before each
// workload, so a front end that was interrupted does not wait for the rest of a large cluster.
// A nil done never closes.
func Until(s *snapshot.Snapshot, done <-chan struct{}) (*Report, error) {
	r := diagnose(s, done)
	if closed(done) {
		return nil, ErrCanceled
	}
	return r, nil
}

func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
