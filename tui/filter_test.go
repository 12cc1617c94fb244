package tui

import (
	"slices"
	"testing"
)

// TestFilterMatchesWhatARowSays: / finds rows by shape, suspect, cause and the suspect's field,
// not only by namespace/name, worst first; several words must all match.
func TestFilterMatchesWhatARowSays(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"never", []string{"telemetry-collector"}},
		{"NEVER", []string{"telemetry-collector"}},
		{"image", []string{"telemetry-collector"}},
		{"env", []string{"telemetry-worker", "telemetry-ingester"}},
		{"INGEST_ENDPOINT", []string{"telemetry-ingester"}},
		{"secretKeyRef", []string{"telemetry-worker"}},
		{"spec", []string{"telemetry-collector", "telemetry-worker", "telemetry-ingester"}},
		{"healthy", []string{"telemetry-dashboard"}},
		{"env idle", []string{"telemetry-ingester"}},
		{"never env", nil},
		// Fuzzy on the name still works, after what matches outright.
		{"wrk", []string{"telemetry-worker"}},
	} {
		m := readyModel(100, 30)
		press(m, "/")
		for _, r := range tc.query {
			press(m, string(r))
		}
		var got []string
		for _, i := range m.workloads.visible {
			got = append(got, m.workloads.rows[i].key.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("/%s shows %v, want %v", tc.query, got, tc.want)
		}
	}
}
