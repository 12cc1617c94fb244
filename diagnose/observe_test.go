package diagnose

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// citationProblems checks that every evidence item read from pod status, events or logs cites
// observations of the diagnosis's own list, and that what it shows is what they say: the
// objects it covers, its reason, its count.
func citationProblems(d *Diagnosis) []string {
	var out []string
	obs := d.Detail.Observations()
	for _, e := range d.Evidence {
		switch e.Source {
		case SourcePodStatus, SourceEvent, SourceLog:
		default:
			continue
		}
		if len(e.Observations) == 0 {
			out = append(out, e.Kind+" ("+string(e.Source)+") cites no observation: "+e.Message)
			continue
		}
		var count int32
		for _, i := range e.Observations {
			if i < 0 || int(i) >= len(obs) {
				out = append(out, e.Kind+" cites observation "+strconv.Itoa(int(i))+" of "+strconv.Itoa(len(obs)))
				continue
			}
			o := &obs[i]
			if !slices.Contains(e.Objects, o.Object.String()) {
				out = append(out, e.Kind+" cites an observation of "+o.Object.String()+", not among its objects "+strings.Join(e.Objects, ","))
			}
			switch e.Source {
			case SourceEvent:
				if o.Kind != ObsEvent || o.Reason != e.Kind {
					out = append(out, e.Kind+" event item cites "+o.Kind.String()+" "+o.Reason)
				}
				count += o.Count
			case SourceLog:
				if o.Kind != ObsLogLine || !o.Failing() {
					out = append(out, "log item cites "+o.Kind.String()+" "+o.Text)
				}
				count++
			case SourcePodStatus:
				if o.Object.Kind != "Pod" {
					out = append(out, e.Kind+" pod-status item cites "+o.Object.String())
				}
				if o.Reason != "" && o.Kind != ObsReadyChanged && o.Reason != e.Kind && (e.Kind != "ImagePullBackOff" || o.Reason != "ErrImagePull") && (e.Kind != "Terminated" || o.Reason != "") {
					out = append(out, e.Kind+" pod-status item cites "+o.Kind.String()+" "+o.Reason)
				}
				count++
			}
		}
		if count != e.Count {
			out = append(out, e.Kind+" counts "+strconv.Itoa(int(e.Count))+", its observations "+strconv.Itoa(int(count)))
		}
	}
	return out
}

// TestEvidenceCitesObservations: what the front ends show as evidence is read from the
// observation list, in every scenario, fixture and the synthetic clusters.
func TestEvidenceCitesObservations(t *testing.T) {
	check := func(t *testing.T, s *snapshot.Snapshot, mustCite bool) {
		r := Diagnose(s)
		cited := 0
		for i := range r.Workloads {
			d := &r.Workloads[i]
			for _, p := range citationProblems(d) {
				t.Errorf("%s/%s: %s", d.Kind, d.Name, p)
			}
			for _, e := range d.Evidence {
				cited += len(e.Observations)
			}
		}
		if mustCite && cited == 0 {
			t.Error("no evidence item cites an observation")
		}
	}
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) { check(t, loadDump(t, vd.Dir, loadExpected(t, vd.Dir)), false) })
	}
	t.Run("synthetic", func(t *testing.T) { check(t, syntheticCluster(40, 10), true) })
	t.Run("synthetic-healthy", func(t *testing.T) { check(t, syntheticHealthyCluster(200, 50), true) })
}

// TestSignalsAreObservations: every signal the suspect rules read is an observation of the
// workload's list with the same text, and a copy's container state is read once for both halves.
func TestSignalsAreObservations(t *testing.T) {
	s := syntheticCluster(40, 10)
	s.Index()
	for _, w := range collectWorkloads(s) {
		d := diagnoseWorkload(s, w)
		if !d.Shape.Broken() {
			continue
		}
		sigs := collectSignals(w)
		if len(sigs) == 0 {
			t.Errorf("%s: broken with no signal", w.Name)
		}
		for _, sg := range sigs {
			if sg.Obs < 0 {
				if sg.From != rules.FromController {
					t.Errorf("%s: %s signal %q cites no observation", w.Name, sg.From, sg.Text)
				}
				continue
			}
			o := &w.obs.list[sg.Obs]
			if o.Text != sg.Text || sg.Pod != "" && o.Object.Name != sg.Pod {
				t.Errorf("%s: signal %q from %s is observation %d %s %q of %s", w.Name, sg.Text, sg.Pod, sg.Obs, o.Kind, o.Text, o.Object)
			}
		}
	}
}

// TestOOMKilledSaysItsExitCode: an OOMKilled termination whose process exited 1 (the runtime
// reports the cgroup's OOM kill while the container's main process exits on its own) is
// worded with exit code 1 everywhere: headline, evidence, suspect, timeline and copies.
func TestOOMKilledSaysItsExitCode(t *testing.T) {
	for _, exit := range []int32{1, 137} {
		c := newCluster()
		d := c.deployment("api", 2, 2, reasonNewRSAvailable, 10*24*time.Hour)
		old := c.replicaSet(d, 1, 0, 10*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
		_ = old
		rs := c.replicaSet(d, 2, 2, 3*24*time.Hour, nil)
		c.pod(rs, "a", 3*24*time.Hour, crashLooping("OOMKilled", exit, 6))
		c.pod(rs, "b", 3*24*time.Hour, crashLooping("OOMKilled", exit, 6))
		got := c.diagnoseOne("api")
		if got.Shape != ShapeStartsAndDies {
			t.Fatalf("exit %d: shape %s, want %s", exit, got.Shape, ShapeStartsAndDies)
		}
		want := "exit code " + strconv.Itoa(int(exit))
		var texts []string
		texts = append(texts, got.Headline)
		for _, e := range got.Evidence {
			if e.Kind == "OOMKilled" || e.Kind == "CrashLoopBackOff" {
				texts = append(texts, e.Message)
			}
		}
		if len(got.Suspects) == 0 || got.Suspects[0].Rule != rules.RuleMemoryLimit {
			t.Fatalf("exit %d: suspects %v, want %s first", exit, got.Suspects, rules.RuleMemoryLimit)
		}
		texts = append(texts, got.Suspects[0].Reason)
		for _, e := range got.Timeline {
			if e.Kind == TimelineRestart {
				texts = append(texts, e.Message)
			}
		}
		for _, cp := range got.Detail.Copies() {
			texts = append(texts, cp.Message)
		}
		for _, s := range texts {
			if !strings.Contains(s, want) {
				t.Errorf("exit %d: %q does not say %q", exit, s, want)
			}
			if exit != 137 && strings.Contains(s, "137") {
				t.Errorf("exit %d: %q says 137", exit, s)
			}
		}
	}
}

// suspectCitationProblems checks the observations each suspect cites: facts of the list that
// report a failure, and, for events, ones the evidence shows too.
func suspectCitationProblems(d *Diagnosis) []string {
	var out []string
	obs := d.Detail.Observations()
	shown := map[int32]bool{}
	for _, e := range d.Evidence {
		for _, i := range e.Observations {
			shown[i] = true
		}
	}
	for _, s := range d.Suspects {
		if len(s.Observations) == 0 && (s.Rule == rules.RuleMemoryLimit || s.Rule == rules.RuleNamedInFailure) {
			out = append(out, string(s.Rule)+" "+pathString(s)+" cites no observation")
		}
		for _, i := range s.Observations {
			if i < 0 || int(i) >= len(obs) {
				out = append(out, string(s.Rule)+" cites observation "+strconv.Itoa(int(i))+" of "+strconv.Itoa(len(obs)))
				continue
			}
			o := &obs[i]
			switch o.Kind {
			case ObsContainerWaiting, ObsContainerTerminated, ObsConditionChanged:
			case ObsEvent:
				if !facts.EventFailing(o.Status, o.Reason, o.Text) {
					out = append(out, string(s.Rule)+" cites a "+o.Status+" event that reports no failure: "+o.Reason)
				}
				if !shown[i] {
					out = append(out, string(s.Rule)+" cites event "+o.Reason+" "+o.Object.String()+", which no evidence item shows")
				}
			case ObsLogLine:
				if !o.Failing() {
					out = append(out, string(s.Rule)+" cites a log line that reports no failure: "+o.Text)
				}
			default:
				out = append(out, string(s.Rule)+" cites a "+o.Kind.String())
			}
		}
	}
	return out
}

// TestSuspectsCiteObservations: a suspect names the observations its rule read, and what it
// read is in the list the evidence is drawn from.
func TestSuspectsCiteObservations(t *testing.T) {
	cited := 0
	check := func(t *testing.T, s *snapshot.Snapshot) {
		r := Diagnose(s)
		for i := range r.Workloads {
			d := &r.Workloads[i]
			for _, p := range suspectCitationProblems(d) {
				t.Errorf("%s/%s: %s", d.Kind, d.Name, p)
			}
			for _, sp := range d.Suspects {
				cited += len(sp.Observations)
			}
		}
	}
	for _, vd := range verdictDirs(t) {
		t.Run(vd.ID, func(t *testing.T) { check(t, loadDump(t, vd.Dir, loadExpected(t, vd.Dir))) })
	}
	t.Run("synthetic", func(t *testing.T) { check(t, syntheticCluster(40, 10)) })
	if cited == 0 {
		t.Error("no suspect cites an observation")
	}
}

// TestObserveSizesExactly: the list is allocated at its final size (before log tails).
func TestObserveSizesExactly(t *testing.T) {
	for _, vd := range verdictDirs(t) {
		s := loadDump(t, vd.Dir, loadExpected(t, vd.Dir))
		s.Index()
		for _, w := range collectWorkloads(s) {
			w.Snap = s
			o := w.observe()
			if len(o.list) != cap(o.list) {
				t.Errorf("%s %s/%s: %d observations in room for %d", vd.ID, w.Kind, w.Name, len(o.list), cap(o.list))
			}
		}
	}
}
