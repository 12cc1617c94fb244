package facts

import "testing"

// TestFactNameByKind holds Container and Type, which share one field: a condition has a type
// and no container, every other kind the reverse.
func TestFactNameByKind(t *testing.T) {
	for k := PodCreated; k <= RevisionCreated; k++ {
		f := Fact{Kind: k, Name: "x"}
		cond := k == ReadyChanged || k == ConditionChanged || k == ControllerCondition
		if cond && (f.Type() != "x" || f.Container() != "") || !cond && (f.Type() != "" || f.Container() != "x") {
			t.Errorf("%s: Type %q, Container %q", k, f.Type(), f.Container())
		}
		if k.String() == "Unknown" {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// A line's reading is shared by its text: read once, the same answer for every line.
func TestReadingIsReadOnce(t *testing.T) {
	text := `{"level":"warn","ts":"2026-11-24T10:00:01Z","msg":"dial failed, retrying","error":"dial tcp 10.0.0.7:9443: connect: connection refused"}`
	r := &Reading{}
	a, b := Fact{Kind: LogLine, Text: text, Reading: r}, Fact{Kind: LogLine, Text: text, Reading: r}
	if !a.Failing() || a.Line() != b.Line() {
		t.Fatalf("two lines of one text read apart: %p %p", a.Line(), b.Line())
	}
	if !a.Dated() || r.Time(text).IsZero() {
		t.Errorf("the line's own time is not read")
	}
	if vs := r.Values(text); len(vs) == 0 || r.ValuesKey(text) != ValuesKey(Values(text)) {
		t.Errorf("values %v, key differs from a fresh reading", vs)
	}
}
