package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
)

// waivedDump copies a fixture's dump and sets the waive annotation on its DaemonSets, as a team
// would with kubectl annotate.
func waivedDump(t *testing.T, fixture, waiver string) string {
	t.Helper()
	dir := t.TempDir()
	src := fixtureDump(fixture)
	err := filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dir, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if e.Name() == "daemonsets.json" {
			var list map[string]any
			if err := json.Unmarshal(data, &list); err != nil {
				return err
			}
			for _, it := range list["items"].([]any) {
				meta := it.(map[string]any)["metadata"].(map[string]any)
				ann, _ := meta["annotations"].(map[string]any)
				if ann == nil {
					ann = map[string]any{}
				}
				ann[diagnose.WaiveAnnotation] = waiver
				meta["annotations"] = ann
			}
			if data, err = json.Marshal(list); err != nil {
				return err
			}
		}
		return os.WriteFile(to, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFailOnBrokenLeavesOutIntendedAndWaived: --fail-on broken exits 3 for a failure, and not
// for the intended states (a suspended CronJob, a DaemonSet waiting for its node pool) nor for a
// failure its team waived; each is still printed, the waived one marked.
func TestFailOnBrokenLeavesOutIntendedAndWaived(t *testing.T) {
	tests := []struct {
		name     string
		dump     string
		failOn   string
		wantOut  string
		wantFail string // the FailOnError's text, "" for none
	}{
		{"a failure fails", fixtureDump("daemonset-taint"), "broken", "never-starts", "1 workload matches --fail-on: never-starts 1"},
		{"a waived failure does not", waivedDump(t, "daemonset-taint", "never-starts; the ingest pool is drained until Monday"), "broken", "never-starts,waived", ""},
		{"a waiver of another shape does not apply", waivedDump(t, "daemonset-taint", "no-eligible-nodes; a pool to come"), "broken", "never-starts", "1 workload matches --fail-on: never-starts 1"},
		{"a waiver of the top suspect's rule applies", waivedDump(t, "daemonset-taint", "scheduling-untolerated-taint; drained"), "broken", "never-starts,waived", ""},
		{"a suspended CronJob is no failure", fixtureDump("cronjob-suspended"), "broken", "suspended", ""},
		{"a DaemonSet waiting for its pool is no failure", fixtureDump("daemonset-node-selector"), "broken", "no-eligible-nodes", ""},
		{"an intended state still fails when named", fixtureDump("daemonset-node-selector"), "no-eligible-nodes", "no-eligible-nodes", "1 workload matches --fail-on: no-eligible-nodes 1"},
		{"a waived intended state does not, even when named", waivedDump(t, "daemonset-node-selector", "no-eligible-nodes; the GPU pool joins in Q3"), "no-eligible-nodes,broken", "no-eligible-nodes,waived", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, nil, hooks{}, "audit", "--dump", tt.dump, "--fail-on", tt.failOn)
			var fo *FailOnError
			switch {
			case tt.wantFail == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.wantFail != "" && (!errors.As(err, &fo) || err.Error() != tt.wantFail):
				t.Errorf("err = %v, want %q", err, tt.wantFail)
			}
			if !strings.Contains(out, " "+tt.wantOut+" ") && !strings.HasPrefix(out, tt.wantOut+" ") && !strings.Contains(out, "\n"+tt.wantOut+" ") {
				t.Errorf("the row does not read %q:\n%s", tt.wantOut, out)
			}
			if strings.Contains(tt.wantOut, "waived") != strings.Contains(out, ",waived") {
				t.Errorf("waived mark: want %v:\n%s", strings.Contains(tt.wantOut, "waived"), out)
			}
		})
	}
}
