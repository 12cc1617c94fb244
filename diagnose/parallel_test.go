package diagnose

import (
	"encoding/json"
	"testing"
)

// TestDiagnoseAllDeterministic: the workers share the workloads, and the diagnoses do not
// depend on how many there are or which ran which.
func TestDiagnoseAllDeterministic(t *testing.T) {
	s := syntheticHealthyCluster(600, 40)
	s.Index()
	want := diagnoseAll(s, collectWorkloads(s), nil, 1)
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{2, 3, 8} {
		got := diagnoseAll(s, collectWorkloads(s), nil, workers)
		if len(got) != len(want) {
			t.Fatalf("%d workers: %d diagnoses, want %d", workers, len(got), len(want))
		}
		gotJSON, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%d workers: diagnoses differ from one worker's: %s", workers, firstDiff(string(wantJSON), string(gotJSON)))
		}
	}
}

// TestDiagnoseAllCanceled: a closed done stops every worker, and no partial list is returned.
func TestDiagnoseAllCanceled(t *testing.T) {
	s := syntheticHealthyCluster(600, 40)
	s.Index()
	done := make(chan struct{})
	close(done)
	if got := diagnoseAll(s, collectWorkloads(s), done, 4); got != nil {
		t.Errorf("canceled: %d diagnoses, want none", len(got))
	}
}
