package snapshot

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestEventsForAndOfUID: EventsFor returns the events naming an object's UID, whatever kind
// and name they give with it, and those naming its kind and name without a UID (in the
// involved object's namespace, else the event's own); not those naming its name under another
// UID. EventsOfUID returns the first part alone, so the two agree for an object no event names
// without a UID, which is what the engine relies on to ask for a copy's events in one lookup.
func TestEventsForAndOfUID(t *testing.T) {
	ev := func(name, kind, ns, obj string, uid types.UID) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "a", Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: obj, UID: uid},
		}
	}
	byUID := ev("by-uid", "Pod", "a", "web-1", "u1")
	otherKind := ev("other-kind", "ReplicaSet", "a", "someone", "u1")
	keyed := ev("keyed", "Pod", "a", "web-1", "")
	keyedNoNS := ev("keyed-no-ns", "Pod", "", "web-1", "")
	earlier := ev("earlier", "Pod", "a", "web-1", "u0")
	otherNS := ev("other-ns", "Pod", "b", "web-1", "")
	onlyByUID := ev("only-by-uid", "Pod", "a", "web-2", "u2")
	s := &Snapshot{Events: []*corev1.Event{byUID, otherKind, keyed, keyedNoNS, earlier, otherNS, onlyByUID}}
	s.Index()

	names := func(es []*corev1.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		what      string
		got, want []string
	}{
		{"EventsFor web-1", names(s.EventsFor("Pod", "a", "web-1", "u1")), []string{"by-uid", "keyed", "keyed-no-ns", "other-kind"}},
		{"EventsOfUID u1", names(s.EventsOfUID("u1")), []string{"by-uid", "other-kind"}},
		{"EventsFor web-1 without a UID", names(s.EventsFor("Pod", "a", "web-1", "")), []string{"by-uid", "earlier", "keyed", "keyed-no-ns"}},
		{"EventsFor web-2", names(s.EventsFor("Pod", "a", "web-2", "u2")), []string{"only-by-uid"}},
		{"EventsOfUID u2", names(s.EventsOfUID("u2")), []string{"only-by-uid"}},
		{"EventsOfUID of no event", names(s.EventsOfUID("u9")), nil},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}
