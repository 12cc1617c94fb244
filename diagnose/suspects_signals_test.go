package diagnose

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// mixedLogCluster builds workloads whose copies fail differently and log differently: two
// containers logging the same texts, texts only some copies log, texts that differ only in
// their timestamps, the same line twice in a tail, previous containers' tails, a line naming
// a variable and one naming a missing executable, more tails than the rules read and a tail
// longer than they read.
func mixedLogCluster() *snapshot.Snapshot {
	c := newCluster()
	for n := range 6 {
		name := fmt.Sprintf("mixed-%d", n)
		d := c.deployment(name, 12, 2, reasonNewRSAvailable, 20*24*time.Hour)
		sidecar := func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Command = []string{"/bin/server"}
			t.Spec.Containers[0].Env = append(t.Spec.Containers[0].Env,
				corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://db.shop.svc:5432/app"})
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{
				Name: "proxy", Image: "registry.example/proxy:2.1",
				Args: []string{"--upstream=upstream.internal:8443", "--listen=:9090"},
			})
		}
		sidecar(&d.Spec.Template)
		c.replicaSet(d, 1, 0, 20*24*time.Hour, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image += "-old" })
		cur := c.replicaSet(d, 2, 12, 24*time.Hour, nil)
		for j := range 12 {
			var state podState
			switch (j + n) % 4 {
			case 0:
				state = crashLooping("OOMKilled", 137, int32(j))
			case 1:
				state = crashLooping("Error", 1, 3)
			case 2:
				state = running(false)
			default:
				state = waiting("ImagePullBackOff", `Back-off pulling image "registry.example/`+name+`:1.0.0"`)
			}
			p := c.pod(cur, fmt.Sprintf("c%02d", j), 24*time.Hour, state)
			if j%3 == 0 {
				c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", int32(j+1), time.Minute)
			}
			var app, proxy, prev []string
			for k := range 40 + j*3 {
				switch (k + j) % 7 {
				case 0:
					// The same line on every copy.
					app = append(app, `{"level":"error","msg":"upstream dial failed","error":"dial tcp upstream.internal:8443: connect: connection refused"}`)
				case 1:
					// Differs from copy to copy only in its time.
					app = append(app, fmt.Sprintf(`2026-11-24T11:%02d:%02dZ ERROR connect upstream.internal:8443: i/o timeout`, j, k%60))
				case 2:
					if j%2 == 0 {
						app = append(app, "fatal: DATABASE_URL is not set")
					}
				case 3:
					app = append(app, "serving on :8080")
				case 4:
					// Twice in a row in one tail.
					app = append(app, "error: upstream.internal:8443 refused", "error: upstream.internal:8443 refused")
				case 5:
					if j < 4 {
						app = append(app, `exec: "/bin/server": executable file not found in $PATH`)
					}
				default:
					app = append(app, fmt.Sprintf("level=info msg=\"request %d\"", k))
				}
				// The proxy logs some of the app's texts too, in its own order.
				if k%5 == (j+n)%5 {
					proxy = append(proxy, "error: upstream.internal:8443 refused")
				}
				if k == 7 && j == 3 {
					// A text another container logged first: a suspect of its own container.
					proxy = append(proxy, `exec: "/bin/server": executable file not found in $PATH`)
				}
				if k%9 == 0 {
					proxy = append(proxy, `{"level":"error","msg":"upstream dial failed","error":"dial tcp upstream.internal:8443: connect: connection refused"}`)
				}
			}
			if j == 5 {
				// Longer than the rules read.
				for k := range maxLogLinesPerContainer + 20 {
					app = append(app, fmt.Sprintf("error: upstream.internal:8443 refused after %d tries", k%3))
				}
			}
			if j%2 == 1 {
				prev = []string{"panic: runtime error: invalid memory address", "fatal: DATABASE_URL is not set", "error: upstream.internal:8443 refused"}
			}
			c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: p.Name, Container: "app", Lines: app})
			if prev != nil {
				c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: p.Name, Container: "app", Previous: true, Lines: prev})
			}
			if len(proxy) > 0 && (j+n)%3 != 0 {
				c.s.Logs = append(c.s.Logs, snapshot.ContainerLog{Namespace: testNS, Pod: p.Name, Container: "proxy", Lines: proxy})
			}
		}
	}
	return c.s
}

// perLine diagnoses s with a log signal per line, as the rules read them before lines of one
// text became one signal.
func perLine(s *snapshot.Snapshot) *Report {
	groupLogLines = false
	defer func() { groupLogLines = true }()
	return Diagnose(s)
}

// TestLogSignalsPerTextChangeNothing: reading a log text's lines as one signal gives the very
// report that a signal per line gave (suspects with their reasons, scores and the observation
// indexes they cite, in order, and every diagnosis's detail), on every scenario, the synthetic
// clusters and a cluster whose copies log differently.
func TestLogSignalsPerTextChangeNothing(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"mixed logs":      mixedLogCluster,
		"healthy 1000x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(1000, 100, 10) },
		"synthetic 300":   func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	for name, build := range cases {
		s := build()
		got, want := Diagnose(s), perLine(s)
		if !reflect.DeepEqual(got, want) {
			for i := range got.Workloads {
				g, w := &got.Workloads[i], &want.Workloads[i]
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s: %s/%s differs read per text:\n got suspects %+v\nwant suspects %+v", name, g.Kind, g.Name, g.Suspects, w.Suspects)
					break
				}
			}
			t.Errorf("%s: the report differs when a log text's lines are one signal", name)
		}
	}
}

// TestMixedLogsExerciseGroups keeps TestLogSignalsPerTextChangeNothing honest: in the mixed
// cluster, log texts are read as signals of several lines and several containers, and
// suspects cite many log lines, of several copies, through them.
func TestMixedLogsExerciseGroups(t *testing.T) {
	s := mixedLogCluster()
	s.Index()
	grouped, containers, citing := 0, map[string]bool{}, 0
	for _, w := range collectWorkloads(s) {
		d := diagnoseWorkload(s, w)
		if !d.Shape.Broken() {
			t.Fatalf("%s is %s, want broken", w.Name, d.Shape)
		}
		for _, sg := range collectSignals(w) {
			if len(sg.Lines) > 1 {
				grouped++
				containers[sg.Container] = true
			}
			for _, h := range sg.Lines {
				o := &w.obs.list[h.Obs]
				if o.Kind != ObsLogLine || o.Text != sg.Text || o.Container() != sg.Container || o.Object.Name != w.Pods[h.Copy].Name {
					t.Errorf("%s: line %d of signal %q is observation %s %q of %s/%s", w.Name, h.Obs, sg.Text, o.Kind, o.Text, o.Object, o.Container())
				}
			}
		}
		list := d.Detail.Observations()
		for _, su := range d.Suspects {
			logs, copies := 0, map[string]bool{}
			for _, i := range su.Observations {
				if o := list[i]; o.Kind == ObsLogLine {
					logs++
					copies[o.Object.Name] = true
				}
			}
			if logs > 10 && len(copies) > 1 {
				citing++
			}
		}
	}
	if grouped == 0 || !containers["app"] || !containers["proxy"] {
		t.Errorf("%d log signals of several lines, containers %v: the mixed cluster does not group lines of both containers", grouped, containers)
	}
	if citing == 0 {
		t.Error("no suspect cites log lines of several copies: the order of citations is not tested")
	}
}
