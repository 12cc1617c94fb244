package dump

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// TestBatchFixturesRoundTrip reads the batch fixtures (dumps the tool wrote on a control plane
// running the job and cronjob controllers), writes them and reads them back unchanged.
func TestBatchFixturesRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		id             string
		jobs, cronJobs int
	}{
		{"job-image-pull", 1, 0},
		{"job-backoff", 1, 0},
		{"job-deadline", 1, 0},
		{"cronjob-template-change", 3, 1},
		{"cronjob-suspended", 0, 1},
		{"cronjob-healthy", 1, 1},
	} {
		t.Run(tt.id, func(t *testing.T) {
			orig, err := Read(filepath.Join("..", "..", "testdata", "fixtures", tt.id, "dump"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(orig.Jobs) != tt.jobs || len(orig.CronJobs) != tt.cronJobs || len(orig.Source.Skipped) != 0 {
				t.Fatalf("read %d Jobs and %d CronJobs (skipped %v), want %d and %d", len(orig.Jobs), len(orig.CronJobs), orig.Source.Skipped, tt.jobs, tt.cronJobs)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if err := Write(dir, orig, false); err != nil {
				t.Fatal(err)
			}
			again, err := Read(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := differences(orig, again); len(diff) > 0 {
				t.Errorf("written dump reads back differently in %v", diff)
			}
		})
	}
}

// TestReferenceTimeCountsBatchTimes: a Job's completion and a CronJob's last schedule are the
// clock readings of a dump that holds nothing newer.
func TestReferenceTimeCountsBatchTimes(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	done := metav1.NewTime(created.Add(7 * time.Minute))
	scheduled := metav1.NewTime(created.Add(24 * time.Hour))
	s := &snapshot.Snapshot{
		Jobs: []*batchv1.Job{{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly-29396100", Namespace: "billing", CreationTimestamp: created},
			Status:     batchv1.JobStatus{StartTime: &created, CompletionTime: &done},
		}},
	}
	if got := newestTime(s); !got.Equal(done.Time) {
		t.Errorf("newest time = %s, want the completion %s", got, done.Time)
	}
	s.CronJobs = []*batchv1.CronJob{{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "billing", CreationTimestamp: created},
		Status:     batchv1.CronJobStatus{LastScheduleTime: &scheduled},
	}}
	if got := newestTime(s); !got.Equal(scheduled.Time) {
		t.Errorf("newest time = %s, want the last schedule %s", got, scheduled.Time)
	}
}

// TestBatchDumpGaps: the pods of a dump of CronJobs and Jobs alone are not seen, not absent; the
// Jobs of a dump of pods alone are missing owners.
func TestBatchDumpGaps(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "fixtures", "cronjob-template-change", "dump", "fixture-cronjob-template-change")
	only := func(files ...string) *snapshot.Snapshot {
		t.Helper()
		tree := map[string][]byte{}
		for _, f := range files {
			tree[f] = mustRead(t, filepath.Join(src, f))
		}
		s, err := Read(writeTree(t, tree), nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	has := func(s *snapshot.Snapshot, kind, reason string) bool {
		for _, v := range s.Visibility {
			if v.Kind == kind && strings.Contains(v.Reason, reason) {
				return true
			}
		}
		return false
	}
	if s := only("cronjobs.json", "jobs.json"); !has(s, "Pod", "not in the dump") {
		t.Errorf("visibility = %+v, want Pod not in the dump", s.Visibility)
	}
	if s := only("pods.json"); !has(s, "Job", "owned by Job nightly-billing-1, nightly-billing-2, nightly-billing-3") {
		t.Errorf("visibility = %+v, want the Jobs the pods name", s.Visibility)
	}
	if s := only("jobs.json"); !has(s, "CronJob", "owned by CronJob nightly-billing") {
		t.Errorf("visibility = %+v, want the CronJob the Jobs name", s.Visibility)
	}
}
