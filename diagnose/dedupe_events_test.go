package diagnose

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dedupeReference is what dedupeEvents promises, written the plain way: each event once, in
// the order first found, then sorted stably by eventTime and name.
func dedupeReference(events []*corev1.Event) []*corev1.Event {
	seen := map[*corev1.Event]bool{}
	var out []*corev1.Event
	for _, e := range events {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := eventTime(out[i]), eventTime(out[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// TestDedupeEventsOrdersByTimeNameAndFinding holds dedupeEvents to the reference on events
// dated by each field a writer may fill, found twice, with equal times and equal names, in
// lists short enough to be scanned and long enough for a map, with and without a worker's room
// (used again by a shorter list, so nothing of the longer one may show).
func TestDedupeEventsOrdersByTimeNameAndFinding(t *testing.T) {
	base := time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(base.Add(time.Duration(s) * time.Second)) }
	rng := rand.New(rand.NewPCG(7, 12))
	event := func(i int) *corev1.Event {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-" + strconv.Itoa(rng.IntN(4)), CreationTimestamp: at(-100)}}
		s := rng.IntN(5)
		switch i % 5 {
		case 0: // core/v1
			e.FirstTimestamp, e.LastTimestamp = at(s-1), at(s)
		case 1: // a series seen again later than its last timestamp
			e.LastTimestamp = at(s - 3)
			e.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(base.Add(time.Duration(s) * time.Second))}
		case 2: // events.k8s.io/v1 alone
			e.EventTime = metav1.NewMicroTime(base.Add(time.Duration(s) * time.Second))
		case 3: // only a first timestamp
			e.FirstTimestamp = at(s)
		case 4: // nothing but its creation; or nothing at all
			if rng.IntN(2) == 0 {
				e.CreationTimestamp = metav1.Time{}
			}
		}
		return e
	}
	room := &textCache{}
	for _, n := range []int{0, 1, 2, 7, fewEvents, fewEvents + 1, 300, 5} {
		pool := make([]*corev1.Event, n)
		for i := range pool {
			pool[i] = event(i)
		}
		// Found twice: the same pointers again, some of them, anywhere in the list.
		list := append([]*corev1.Event(nil), pool...)
		for i := 0; i < n/3; i++ {
			list = append(list, pool[rng.IntN(n)])
		}
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		want := dedupeReference(list)
		for _, texts := range []*textCache{nil, room} {
			got := dedupeEvents(append([]*corev1.Event(nil), list...), texts)
			if len(got) != len(want) {
				t.Fatalf("%d events (room %v): %d kept, want %d", n, texts != nil, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%d events (room %v): #%d is %s at %v, want %s at %v", n, texts != nil, i,
						got[i].Name, eventTime(got[i]), want[i].Name, eventTime(want[i]))
				}
			}
		}
	}
}
