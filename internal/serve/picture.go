package serve

import (
	"strings"
	"sync"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/report"
)

// Picture is the latest diagnosis and the health of the reads behind it; the follow loop
// writes it, the HTTP handlers and the collector read it.
type Picture struct {
	mu sync.RWMutex
	// report is the newest diagnosis; nil until the first read is in.
	report *diagnose.Report
	// took is how long the engine took over it.
	took time.Duration
	// failing is the last read error since the newest snapshot, and since when reads fail.
	failing      error
	failingSince time.Time
	readErrors   uint64
}

// Update makes r, the diagnosis of a fresh snapshot, the picture and clears any failure: the
// watch sends a snapshot when every watch runs.
func (p *Picture) Update(r *diagnose.Report, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.report, p.took = r, took
	p.failing, p.failingSince = nil, time.Time{}
}

// Refresh makes r, a new diagnosis of the last snapshot at a later reference time, the
// picture; a failure stands, since nothing new was read.
func (p *Picture) Refresh(r *diagnose.Report, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.report, p.took = r, took
}

// Fail records a read that failed at the given time; the picture stays as it was.
func (p *Picture) Fail(err error, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing == nil {
		p.failingSince = at
	}
	p.failing = err
	p.readErrors++
}

// Report returns the newest diagnosis, nil before the first read. It is shared: callers do
// not change it.
func (p *Picture) Report() *diagnose.Report {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.report
}

// Ready says whether the picture is current, and when not, why.
func (p *Picture) Ready() (bool, string) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch {
	case p.report == nil && p.failing != nil:
		return false, "nothing read yet: " + oneLine(p.failing.Error())
	case p.report == nil:
		return false, "the first read is not in yet"
	case p.failing != nil:
		return false, "reads failing since " + p.failingSince.UTC().Format(time.RFC3339) + ": " + oneLine(p.failing.Error()) +
			"; the picture is of " + p.report.ReferenceTime.UTC().Format(time.RFC3339)
	}
	return true, ""
}

// state is what one scrape reads, copied under the lock.
type state struct {
	report     *diagnose.Report
	took       time.Duration
	failing    bool
	readErrors uint64
}

func (p *Picture) state() state {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return state{report: p.report, took: p.took, failing: p.failing != nil, readErrors: p.readErrors}
}

// oneLine is an error message as one printable line: a server's error may carry newlines and
// control characters, and a probe's reason is read in `kubectl describe pod`.
func oneLine(s string) string { return report.Clean(strings.Join(strings.Fields(s), " ")) }
