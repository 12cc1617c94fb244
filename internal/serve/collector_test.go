package serve

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// scenario diagnoses one of the shared scenarios' dumps, written by a real v1.37 API server.
func scenario(t testing.TB, id string) *diagnose.Report {
	t.Helper()
	s, err := dump.Read(filepath.Join("..", "..", "testdata", "scenarios", id, "dump"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return diagnose.Diagnose(s)
}

// series is one gathered sample: its name, labels and value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

func gather(t testing.TB, c prometheus.Collector) []series {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var out []series
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := series{name: mf.GetName(), labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			default:
				s.value = m.GetGauge().GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// of returns the series of name for workload name, or nil.
func of(ss []series, metric, workload string) []series {
	var out []series
	for _, s := range ss {
		if s.name == metric && (workload == "" || s.labels["name"] == workload) {
			out = append(out, s)
		}
	}
	return out
}

func TestCollectorSeriesFollowTheReport(t *testing.T) {
	r := scenario(t, "dev-mixed")
	// The worst workload waived by its annotation, as the engine writes it.
	r.Workloads[0].Waived = &diagnose.Waiver{What: string(r.Workloads[0].Shape), Reason: "known"}
	p := &Picture{}
	p.Update(r, 40*time.Millisecond)
	ss := gather(t, NewCollector(p, nil))

	if len(r.Workloads) < 3 {
		t.Fatalf("dev-mixed has %d workloads, want at least 3", len(r.Workloads))
	}
	for _, d := range r.Workloads {
		want := map[string]float64{
			"kubectl_diagnose_workload_declared_copies": float64(d.Counts.Declared),
			"kubectl_diagnose_workload_existing_copies": float64(d.Counts.Existing),
			"kubectl_diagnose_workload_serving_copies":  float64(d.Counts.Serving),
		}
		for metric, v := range want {
			got := of(ss, metric, d.Name)
			if len(got) != 1 || got[0].value != v || got[0].labels["namespace"] != d.Namespace || got[0].labels["kind"] != d.Kind || len(got[0].labels) != 3 {
				t.Errorf("%s of %s = %+v, want one series of %v labelled namespace %s kind %s", metric, d.Name, got, v, d.Namespace, d.Kind)
			}
		}
		shape := of(ss, "kubectl_diagnose_workload_shape", d.Name)
		if len(shape) != 1 || shape[0].labels["shape"] != string(d.Shape) || shape[0].value != 1 {
			t.Errorf("shape of %s = %+v, want one series shape=%s", d.Name, shape, d.Shape)
		}
		info := of(ss, "kubectl_diagnose_workload_info", d.Name)
		wantRule := ""
		if len(d.Suspects) > 0 {
			wantRule = string(d.Suspects[0].Rule)
		}
		if len(info) != 1 || info[0].labels["cause"] != string(d.Cause) || info[0].labels["top_suspect_rule"] != wantRule {
			t.Errorf("info of %s = %+v, want cause %s top_suspect_rule %q", d.Name, info, d.Cause, wantRule)
		}
		switch waived := of(ss, "kubectl_diagnose_workload_waived", d.Name); {
		case d.Waived == nil && len(waived) != 0:
			t.Errorf("%s is not waived, yet has %+v", d.Name, waived)
		case d.Waived != nil && (len(waived) != 1 || waived[0].value != 1 || waived[0].labels["what"] != d.Waived.What):
			t.Errorf("waived of %s = %+v, want one series what=%s", d.Name, waived, d.Waived.What)
		}
		age := of(ss, "kubectl_diagnose_workload_youngest_copy_age_seconds", d.Name)
		switch {
		case d.YoungestCopySeconds == nil && len(age) != 0:
			t.Errorf("%s has no copy but a youngest copy age %+v", d.Name, age)
		case d.YoungestCopySeconds != nil && (len(age) != 1 || age[0].value != float64(*d.YoungestCopySeconds)):
			t.Errorf("youngest copy age of %s = %+v, want %d", d.Name, age, *d.YoungestCopySeconds)
		}
	}
	if noCopy := slices.IndexFunc(r.Workloads, func(d diagnose.Diagnosis) bool { return d.YoungestCopySeconds == nil }); noCopy < 0 {
		t.Error("dev-mixed has no workload without a copy; the absent-age case is not tested")
	}

	byShape := map[string]float64{}
	for _, s := range of(ss, "kubectl_diagnose_workloads", "") {
		byShape[s.labels["shape"]] = s.value
	}
	for _, s := range diagnose.Shapes {
		if got, ok := byShape[string(s)]; !ok || got != float64(r.Summary[s]) {
			t.Errorf("kubectl_diagnose_workloads{shape=%q} = %v (present %v), want %d", s, got, ok, r.Summary[s])
		}
	}
	if ts := of(ss, "kubectl_diagnose_last_read_timestamp_seconds", ""); len(ts) != 1 || int64(ts[0].value) != r.ReferenceTime.Unix() {
		t.Errorf("last read timestamp %+v, want %d", ts, r.ReferenceTime.Unix())
	}
	if d := of(ss, "kubectl_diagnose_diagnosis_duration_seconds", ""); len(d) != 1 || d[0].value != 0.04 {
		t.Errorf("diagnosis duration %+v, want 0.04", d)
	}
}

func TestCollectorDropsARemovedWorkloadsSeries(t *testing.T) {
	r := scenario(t, "dev-mixed")
	p := &Picture{}
	p.Update(r, 0)
	c := NewCollector(p, nil)
	gone := r.Workloads[0].Name
	if n := countNamed(gather(t, c), gone); n < 5 {
		t.Fatalf("%s has %d series before its removal, want at least 5", gone, n)
	}
	less := *r
	less.Workloads = r.Workloads[1:]
	p.Update(&less, 0)
	ss := gather(t, c)
	if n := countNamed(ss, gone); n != 0 {
		t.Errorf("%s has %d series after it left the report, want none", gone, n)
	}
	if n := countNamed(ss, r.Workloads[1].Name); n < 5 {
		t.Errorf("%s, still in the report, has %d series", r.Workloads[1].Name, n)
	}
}

func countNamed(ss []series, name string) int {
	n := 0
	for _, s := range ss {
		if s.labels["name"] == name {
			n++
		}
	}
	return n
}

// TestCollectorCardinalityIsBounded checks every label but namespace and name against its
// closed vocabulary, over scenarios of every shape, and the series per workload.
func TestCollectorCardinalityIsBounded(t *testing.T) {
	closed := map[string]map[string]bool{"shape": {}, "cause": {"spec": true, "dependency": true, "unknown": true}, "top_suspect_rule": {"": true, OtherRule: true}, "kind": {"Deployment": true, "StatefulSet": true, "DaemonSet": true}}
	for _, s := range diagnose.Shapes {
		closed["shape"][string(s)] = true
	}
	for _, r := range diagnose.Rules() {
		closed["top_suspect_rule"][string(r.ID)] = true
	}
	seenRules := map[string]bool{}
	for _, id := range []string{"dev-gateway", "dev-ingester", "dev-mixed", "dev-payments", "dev-reports", "dev-rollout", "dev-search", "dev-shipper", "dev-thumbs", "dev-web"} {
		r := scenario(t, id)
		p := &Picture{}
		p.Update(r, 0)
		ss := gather(t, NewCollector(p, nil))
		perWorkload := map[string]int{}
		for _, s := range ss {
			for l, v := range s.labels {
				if vocab, ok := closed[l]; ok && !vocab[v] {
					t.Errorf("%s: %s{%s=%q} is outside its vocabulary", id, s.name, l, v)
				}
				if l == "top_suspect_rule" && v != "" {
					seenRules[v] = true
				}
			}
			if !strings.HasPrefix(s.name, Namespace+"_") {
				t.Errorf("%s: series %s lacks the %s_ prefix", id, s.name, Namespace)
			}
			if n, ok := s.labels["name"]; ok {
				perWorkload[s.labels["namespace"]+"/"+s.labels["kind"]+"/"+n]++
			}
		}
		if len(perWorkload) != len(r.Workloads) {
			t.Errorf("%s: series for %d workloads, the report has %d", id, len(perWorkload), len(r.Workloads))
		}
		for w, n := range perWorkload {
			if n > len(workloadGauges)+2 {
				t.Errorf("%s: %s has %d series, want at most %d", id, w, n, len(workloadGauges)+2)
			}
		}
	}
	if len(seenRules) < 3 {
		t.Errorf("the scenarios gave top suspect rules %v; want several, or the vocabulary check tests little", seenRules)
	}

	// A rule the catalogue does not list keeps the label's bound.
	r := scenario(t, "dev-ingester")
	r.Workloads[0].Suspects = []diagnose.Suspect{{Rule: "made-up-rule"}}
	p := &Picture{}
	p.Update(r, 0)
	info := of(gather(t, NewCollector(p, nil)), "kubectl_diagnose_workload_info", r.Workloads[0].Name)
	if len(info) != 1 || info[0].labels["top_suspect_rule"] != OtherRule {
		t.Errorf("an uncatalogued rule gave %+v, want top_suspect_rule=%q", info, OtherRule)
	}
}

func TestCollectorAgesCopiesOnTheServersClock(t *testing.T) {
	r := scenario(t, "dev-ingester")
	p := &Picture{}
	p.Update(r, 0)
	now := r.ReferenceTime.Add(90 * time.Second)
	age := of(gather(t, NewCollector(p, func() time.Time { return now })), "kubectl_diagnose_workload_youngest_copy_age_seconds", "telemetry-ingester")
	if want := float64(*r.Workloads[0].YoungestCopySeconds + 90); len(age) != 1 || age[0].value != want {
		t.Errorf("youngest copy age 90s after the read = %+v, want %v", age, want)
	}
}

func TestCollectorBeforeTheFirstRead(t *testing.T) {
	p := &Picture{}
	p.Fail(errString("connection refused"), time.Now())
	var names []string
	for _, s := range gather(t, NewCollector(p, nil)) {
		names = append(names, fmt.Sprintf("%s=%g", s.name, s.value))
	}
	sort.Strings(names)
	want := []string{"kubectl_diagnose_read_errors_total=1", "kubectl_diagnose_read_failing=1"}
	if !slices.Equal(names, want) {
		t.Errorf("series before the first read = %v, want %v", names, want)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
