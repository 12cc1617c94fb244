package diagnose

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObservationTimesRoundTrip holds the compact times of an Observation to the time.Time
// they stand in for: the same value (reflect.DeepEqual, location included) for the zero
// time, UTC, time.Local (where the API machinery decodes to), fixed zones and named ones,
// nanoseconds, and times far before and after 1970.
func TestObservationTimesRoundTrip(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		berlin = time.FixedZone("CET", 3600)
	}
	var decoded metav1.Time
	if err := decoded.UnmarshalJSON([]byte(`"2026-12-01T22:41:07Z"`)); err != nil {
		t.Fatal(err)
	}
	times := []time.Time{
		{},
		time.Time{}.In(time.Local),
		decoded.Time,
		time.Date(2026, 12, 1, 22, 41, 7, 0, time.UTC),
		time.Date(2026, 12, 1, 22, 41, 7, 123456789, time.UTC),
		time.Date(2026, 12, 1, 22, 41, 7, 999999999, time.Local),
		time.Date(2026, 12, 1, 22, 41, 7, 5, time.FixedZone("", -7*3600)),
		time.Date(2026, 7, 1, 12, 0, 0, 0, berlin),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(1<<40, 0).UTC(),
	}
	for _, at := range times {
		since := at.Add(-90 * time.Minute)
		ob := withTimes(Observation{Kind: ObsContainerTerminated}, at, since)
		if got := ob.At(); !reflect.DeepEqual(got, at) {
			t.Errorf("At: %#v stored, %#v read back", at, got)
		}
		if got := ob.Since(); !reflect.DeepEqual(got, since) {
			t.Errorf("Since: %#v stored, %#v read back", since, got)
		}
		if ob.At().IsZero() != at.IsZero() || !ob.At().Equal(at) {
			t.Errorf("%v: IsZero or Equal differ", at)
		}
	}
	// An observation that never had a time set reads the zero time, as a time.Time field did.
	var ob Observation
	if !reflect.DeepEqual(ob.At(), time.Time{}) || !reflect.DeepEqual(ob.Since(), time.Time{}) {
		t.Errorf("the zero Observation reads %#v and %#v, not the zero time", ob.At(), ob.Since())
	}
}

// TestObservationNameByKind holds Container and Type, which share one field, to what the two
// fields held: a condition has a type and no container, every other kind the reverse.
func TestObservationNameByKind(t *testing.T) {
	for k := ObsPodCreated; k <= ObsRevisionCreated; k++ {
		ob := Observation{Kind: k, name: "x"}
		cond := k == ObsReadyChanged || k == ObsConditionChanged || k == ObsControllerCondition
		if cond && (ob.Type() != "x" || ob.Container() != "") || !cond && (ob.Type() != "" || ob.Container() != "x") {
			t.Errorf("%s: Type %q, Container %q", k, ob.Type(), ob.Container())
		}
	}
}
