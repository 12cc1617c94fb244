package live

import (
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestEveryKindHasItsCalls holds the calls to the kind table: each kind the snapshot holds is
// listed and watched, and no call is left for a kind the table no longer has.
func TestEveryKindHasItsCalls(t *testing.T) {
	for i := range snapshot.Kinds {
		k := &snapshot.Kinds[i]
		if c, ok := kindCalls[k.Kind]; !ok || c.list == nil || c.watch == nil {
			t.Errorf("kind %s has no list and watch calls", k.Kind)
		}
	}
	for name := range kindCalls {
		if snapshot.KindNamed(name) == nil {
			t.Errorf("calls for %s, which is not a kind of snapshot.Kinds", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("liveKinds accepted a table with a kind that has no calls")
		}
	}()
	liveKinds(snapshot.Kinds, map[string]calls{})
}
