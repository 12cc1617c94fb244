package report

import "github.com/kubediagnose/kubectl-diagnose/diagnose"

// ShapeMeaning says in one line what a shape means for the people running the workload.
func ShapeMeaning(s diagnose.Shape) string {
	switch s {
	case diagnose.ShapeHealthy:
		return "every declared copy exists and serves"
	case diagnose.ShapeProgressing:
		return "a rollout is under way within its deadline, with no failure evidence"
	case diagnose.ShapeNeverStarts:
		return "no copy of the current revision ever ran"
	case diagnose.ShapeStartsAndDies:
		return "copies start, then exit, and the controller keeps replacing them"
	case diagnose.ShapeLiveButIdle:
		return "copies run and stay up, but too few of them serve"
	}
	return "the signals do not fit a known shape"
}

// CauseMeaning says in one line what a cause implies for the fix.
func CauseMeaning(c diagnose.Cause) string {
	switch c {
	case diagnose.CauseSpec:
		return "the spec is wrong: changing it fixes the workload"
	case diagnose.CauseDependency:
		return "the spec is unchanged since it last served: something it depends on fails"
	}
	return "not attributed"
}
