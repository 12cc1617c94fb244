package metamorph

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// load reads a scenario's or fixture's dump with the reference time of its verdict file.
func load(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	dir = filepath.Join("..", "..", dir)
	s, err := dump.Read(filepath.Join(dir, "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		ReferenceTime time.Time `json:"reference_time"`
	}
	if err := yaml.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	s.ReferenceTime = e.ReferenceTime
	return s
}

// allTimes lists every time of s in a fixed order: object fields, annotations, log lines.
func allTimes(s *snapshot.Snapshot) []time.Time {
	var out []time.Time
	record := func(t time.Time) time.Time { out = append(out, t); return t }
	c := Clone(s) // mapTimes writes back what record returns; keep s as it is
	c.Each(func(o runtime.Object) { walkTimes(reflect.ValueOf(o), record) })
	for _, l := range c.Logs {
		for _, line := range l.Lines {
			mapLineTimes(line, record)
		}
	}
	return out
}

func TestShiftMovesEveryTime(t *testing.T) {
	for _, dir := range []string{"testdata/fixtures/ready-then-fails", "testdata/fixtures/invalid-image", "testdata/fixtures/cronjob-healthy", "internal/demo"} {
		s := load(t, dir)
		before := allTimes(s)
		d := 35*24*time.Hour + 1500*time.Millisecond
		shifted := Shift(s, d)
		after := allTimes(shifted)
		if len(after) != len(before) || len(before) < 20 {
			t.Fatalf("%s: %d times before, %d after", dir, len(before), len(after))
		}
		lineTimes := 0
		for i := range before {
			// Times written to the second move by the whole seconds of d.
			want := before[i].Add(d).Truncate(time.Second)
			if got := after[i].Truncate(time.Second); !got.Equal(want) && !got.Equal(want.Add(time.Second)) {
				t.Errorf("%s: time %d is %s, want %s", dir, i, after[i], before[i].Add(d))
			}
		}
		for _, l := range s.Logs {
			for _, line := range l.Lines {
				if mapLineTimes(line, func(t time.Time) time.Time { return t.Add(time.Hour) }) != line {
					lineTimes++
				}
			}
		}
		if !shifted.ReferenceTime.Equal(s.ReferenceTime.Add(d)) {
			t.Errorf("%s: reference time %s, want %s", dir, shifted.ReferenceTime, s.ReferenceTime.Add(d))
		}
		if again := allTimes(s); !reflect.DeepEqual(again, before) {
			t.Errorf("%s: the snapshot given to Shift changed", dir)
		}
		if len(s.Logs) > 0 && lineTimes == 0 {
			t.Errorf("%s: no log line carries a time Shift reads", dir)
		}
	}
}

func TestShiftMovesAnnotatedTimes(t *testing.T) {
	s := load(t, "testdata/fixtures/cronjob-healthy")
	const key = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	shifted := Shift(s, 24*time.Hour)
	n := 0
	for i, j := range s.Jobs {
		v, ok := j.Annotations[key]
		if !ok {
			continue
		}
		n++
		was, _ := time.Parse(time.RFC3339, v)
		now, _ := time.Parse(time.RFC3339, shifted.Jobs[i].Annotations[key])
		if now.Sub(was) != 24*time.Hour {
			t.Errorf("Job %s: %s moved to %s", j.Name, v, shifted.Jobs[i].Annotations[key])
		}
	}
	if n == 0 {
		t.Fatal("no Job carries the CronJob controller's scheduled timestamp")
	}
}

func TestRenameFollowsEveryReference(t *testing.T) {
	for _, dir := range []string{"testdata/fixtures/ready-then-fails", "testdata/fixtures/service-port", "internal/demo"} {
		s := load(t, dir)
		c, names, err := Rename(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Pods) != len(s.Pods) || len(names) == 0 {
			t.Fatalf("%s: %d pods became %d, %d renamed", dir, len(s.Pods), len(c.Pods), len(names))
		}
		uids := map[string]bool{}
		for _, p := range s.Pods {
			if _, ok := names[p.Name]; ok {
				uids[string(p.UID)] = true
			}
		}
		mention := func(where, text string) {
			for old := range names {
				if strings.Contains(text, old) {
					t.Errorf("%s: %s still names %s: %s", dir, where, old, text)
				}
			}
			for u := range uids {
				if strings.Contains(text, u) {
					t.Errorf("%s: %s still holds UID %s", dir, where, u)
				}
			}
		}
		for _, p := range c.Pods {
			status, _ := json.Marshal(p.Status)
			mention("a pod", p.Name+" "+string(p.UID)+" "+string(status))
			if strings.HasSuffix(p.Name, "-0") && p.GenerateName == "" {
				if _, ok := names[p.Name]; ok {
					t.Errorf("%s: StatefulSet copy %s renamed", dir, p.Name)
				}
			}
		}
		for _, e := range c.Events {
			mention("an event", e.Name+" "+e.InvolvedObject.Name+" "+string(e.InvolvedObject.UID)+" "+e.Message)
		}
		for _, es := range c.EndpointSlices {
			for _, ep := range es.Endpoints {
				if ep.TargetRef != nil {
					mention("an EndpointSlice", ep.TargetRef.Name+" "+string(ep.TargetRef.UID))
				}
			}
		}
		for _, l := range c.Logs {
			mention("a log tail", l.Pod+" "+strings.Join(l.Lines, "\n"))
		}
		// What referred to a copy refers to its new name, and it still exists.
		live := map[string]bool{}
		for _, p := range c.Pods {
			live[p.Name] = true
		}
		for _, e := range c.Events {
			if e.InvolvedObject.Kind == "Pod" && !live[e.InvolvedObject.Name] && names[e.InvolvedObject.Name] != "" {
				t.Errorf("%s: event about %s, which is neither a copy nor renamed", dir, e.InvolvedObject.Name)
			}
		}
		for _, l := range c.Logs {
			if !live[l.Pod] {
				t.Errorf("%s: log tail of %s, which is no copy", dir, l.Pod)
			}
		}
	}
}

func readyCondition(t *testing.T, s *snapshot.Snapshot, name string) (start, off time.Time) {
	t.Helper()
	for _, p := range s.Pods {
		if p.Name == name {
			return podStart(p), condition(p, corev1.PodReady).LastTransitionTime.Time
		}
	}
	t.Fatalf("no copy %s", name)
	return
}

func TestStretchReady(t *testing.T) {
	for _, tt := range []struct {
		dir  string
		w    Workload
		was  time.Duration // how long the copies were Ready before, about
		copy string
	}{
		{"testdata/fixtures/ready-then-fails", Workload{"Deployment", "fixture-ready-then-fails", "telemetry-ingester"}, 150 * time.Second, "telemetry-ingester-c575c6b7c-4thrw"},
		{"testdata/scenarios/dev-ingester", Workload{"Deployment", "dev-ingester", "telemetry-ingester"}, 0, "telemetry-ingester-c575c6b7c-7g644"},
	} {
		s := load(t, tt.dir)
		const d = 10 * time.Minute
		c, err := StretchReady(s, tt.w, d)
		if err != nil {
			t.Fatalf("%s: %v", tt.dir, err)
		}
		start, off := readyCondition(t, c, tt.copy)
		if ready := off.Sub(start); ready < tt.was+d-time.Minute || ready > tt.was+d+time.Minute {
			t.Errorf("%s: %s Ready for %s, want about %s", tt.dir, tt.copy, ready, tt.was+d)
		}
		if !c.ReferenceTime.Equal(s.ReferenceTime) {
			t.Errorf("%s: the reference time moved", tt.dir)
		}
		// Failing from its start still: a failing line in the copy's first seconds, and
		// failing lines as close together as its retry loop logged them until it stopped
		// being Ready.
		for _, p := range c.Pods {
			if p.Name != tt.copy {
				continue
			}
			if !failingFromStart(c, p) {
				t.Errorf("%s: %s no longer fails from its start", tt.dir, tt.copy)
			}
			var last time.Time
			for _, sp := range Failures(c, p) {
				if !last.IsZero() && sp.From.Before(off) && sp.From.Sub(last) > 31*time.Second {
					t.Errorf("%s: %s quiet from %s to %s while Ready", tt.dir, tt.copy, last, sp.From)
				}
				last = sp.To
			}
		}
		dep := tt.w.deployment(c)
		if p := deploymentCondition(dep, "Progressing"); p == nil || p.Reason != "NewReplicaSetAvailable" || p.LastUpdateTime.After(off) {
			t.Errorf("%s: Progressing %+v, want the rollout complete while the copies were Ready", tt.dir, p)
		}
		if a := deploymentCondition(dep, "Available"); a == nil || a.LastTransitionTime.Time.Before(off) {
			t.Errorf("%s: Available %+v, want False from when the copies stopped being Ready", tt.dir, a)
		}
	}
	for _, tt := range []struct {
		dir string
		w   Workload
		why string
	}{
		{"testdata/fixtures/readiness-port", Workload{"Deployment", "fixture-readiness-port", "inventory"}, "could not have passed"},
		{"testdata/scenarios/dev-web", Workload{"Deployment", "dev-web", "web-frontend"}, "could not have passed"},
		{"testdata/fixtures/upstream-after-serving", Workload{"Deployment", "fixture-upstream-after-serving", "telemetry-ingester"}, "no failure in its first"},
		{"testdata/fixtures/liveness", Workload{"Deployment", "fixture-liveness", "session-cache"}, "without rewriting its runs"},
	} {
		_, err := StretchReady(load(t, tt.dir), tt.w, time.Minute)
		if !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s: %v, want not applicable: %s", tt.dir, err, tt.why)
		}
	}
}

func TestServeThenFail(t *testing.T) {
	s := load(t, "testdata/fixtures/configmap-key")
	w := Workload{"Deployment", "fixture-configmap-key", "docs-site"}
	const served = 6 * 24 * time.Hour
	c, err := ServeThenFail(s, w, served)
	if err != nil {
		t.Fatal(err)
	}
	rs := w.ReplicaSets(c)[0]
	first := c.Pods[0].CreationTimestamp.Time
	for _, p := range c.Pods {
		first = minTime(first, p.CreationTimestamp.Time)
	}
	if gap := first.Sub(rs.CreationTimestamp.Time); gap < served {
		t.Errorf("the revision was created %s before its copies, want at least %s", gap, served)
	}
	for i, p := range c.Pods {
		if !reflect.DeepEqual(p, s.Pods[i]) {
			t.Errorf("copy %s changed; the failing copies stay as they were", p.Name)
		}
	}
	for _, e := range c.Events {
		if c.ReferenceTime.Sub(eventLast(e)) > eventTTL {
			t.Errorf("event %s %s is older than the API server keeps events", e.Reason, eventLast(e))
		}
		if e.Reason == "ScalingReplicaSet" {
			t.Errorf("the rollout's event %q is still here, at the failure", e.Message)
		}
	}
	dep := w.deployment(c)
	if p := deploymentCondition(dep, "Progressing"); p == nil || p.Reason != "NewReplicaSetAvailable" || p.LastUpdateTime.After(first.Add(-served+time.Minute)) {
		t.Errorf("Progressing %+v, want the rollout complete %s before the failure", p, served)
	}
	if a := deploymentCondition(dep, "Available"); a == nil || a.Status != "False" || a.LastTransitionTime.Time.Before(first.Add(-2*time.Second)) {
		t.Errorf("Available %+v, want False only from the failure on", a)
	}
	for _, tt := range []struct {
		dir string
		w   Workload
		why string
	}{
		{"testdata/fixtures/ready-then-fails", Workload{"Deployment", "fixture-ready-then-fails", "telemetry-ingester"}, "2 revisions"},
		{"testdata/fixtures/storageclass", Workload{"StatefulSet", "fixture-storageclass", "metrics-db"}, "keeps no condition"},
		{"testdata/fixtures/get-deploy-yaml", Workload{"Deployment", "fixture-get-deploy-yaml", "audit-exporter"}, "no ReplicaSet"},
	} {
		_, err := ServeThenFail(load(t, tt.dir), tt.w, served)
		if !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s: %v, want not applicable: %s", tt.dir, err, tt.why)
		}
	}
}

func TestChangedFields(t *testing.T) {
	for _, tt := range []struct {
		dir  string
		w    Workload
		want []string
	}{
		{"testdata/fixtures/ready-then-fails", Workload{"Deployment", "fixture-ready-then-fails", "telemetry-ingester"}, []string{"spec.template.spec.containers[0].env[0].value"}},
		{"testdata/fixtures/start-error", Workload{"Deployment", "fixture-start-error", "pdf-renderer"}, []string{"spec.template.spec.containers[0].command[0]"}},
		{"testdata/fixtures/registry-down", Workload{"Deployment", "fixture-registry-down", "notifier"}, nil},
	} {
		if got := ChangedFields(load(t, tt.dir), tt.w); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: changed %v, want %v", tt.dir, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"spec.template.spec.containers[0].resources.requests[cpu]", "spec.template.spec.containers[0].resources.requests.cpu", true},
		{"spec.template.spec.containers[0].env[3]", "spec.template.spec.containers[0].env[3].valueFrom.secretKeyRef.key", true},
		{"spec.template.spec.containers[0].env[3]", "spec.template.spec.containers[0].env[30]", false},
		{"spec.template.spec.containers[0].image", "spec.template.spec.containers[0].imagePullPolicy", false},
	} {
		if got := Related(tt.a, tt.b); got != tt.want {
			t.Errorf("Related(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := load(t, "testdata/fixtures/ready-then-fails")
	c := Clone(s)
	c.Pods[0].Name = "changed"
	c.Pods[0].Status.Conditions[0].Reason = "changed"
	c.Logs[0].Lines[0] = "changed"
	c.Events[0].Message = "changed"
	if s.Pods[0].Name == "changed" || s.Pods[0].Status.Conditions[0].Reason == "changed" || s.Logs[0].Lines[0] == "changed" || s.Events[0].Message == "changed" {
		t.Error("a change to the clone reached the snapshot it was cloned from")
	}
	if c.Len() != s.Len() {
		t.Errorf("clone holds %d objects, the snapshot %d", c.Len(), s.Len())
	}
}
