// Package metamorph rewrites a snapshot in ways that keep what a workload's failure means, or
// change it by construction: the metamorphic relations issue 37 holds the engine to. Logs are
// removed, their failing lines re-levelled, reworded or re-encoded; every time is shifted by a
// constant; the copies are renamed; the Ready period of a revision failing from its start is
// stretched; a single-revision failure is moved after a long serving episode.
//
// Every transformation works on a deep copy (Clone) and leaves the snapshot it is given as it
// was, so one loaded dump serves every variant. Transformations that cannot apply to a snapshot
// say why (ErrNotApplicable), so a table of cases states what was left out and on what ground.
//
// The facts the transformations read (a copy's failure signals, its start, a Deployment's
// revisions) are exported for the story checker's oracles too (Failures, Start, Revision).
//
// Invariant: this is test-only code. Product packages never import it; it reads only the
// snapshot model, never the engine, so a relation cannot be made to hold by sharing the
// engine's own reading of a fact.
package metamorph
