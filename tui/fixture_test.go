package tui

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// refTime is the reference time of the fixture, as a dump's newest timestamp would be.
var refTime = time.Date(2026, 11, 24, 14, 32, 10, 0, time.UTC)

// maliciousLog is a log line that tries to retitle the terminal, clear it, and set the
// clipboard; none of it may reach the screen.
const maliciousLog = "level=error msg=\"dial tcp 10.96.14.7:9443: connect: connection refused\"\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cm0gLXJmIC8=\x07\x9b31m tail"

func deployment(name string, replicas int32, env []corev1.EnvVar, image string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "telemetry", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(refTime.Add(-48 * time.Hour)),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  name,
					Image: image,
					Env:   env,
					Ports: []corev1.ContainerPort{{ContainerPort: 8080, Name: "http", Protocol: corev1.ProtocolTCP}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
						Path: "/healthz", Port: intstrPort(8080),
					}}, PeriodSeconds: 5},
				}}},
			},
		},
	}
}

func pod(owner *appsv1.Deployment, i int, ready bool, restarts int32, waiting string) *corev1.Pod {
	name := fmt.Sprintf("%s-7d9c5b8f6-%c%c%c%c%c", owner.Name, 'a'+i, 'b'+i, 'c'+i, 'd'+i, 'e'+i)
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	cs := corev1.ContainerStatus{Name: owner.Name, Ready: ready, RestartCount: restarts}
	if waiting != "" {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting, Message: "back-off 5m0s restarting failed container"}
	} else {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(refTime.Add(-12 * time.Minute))}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "telemetry", UID: types.UID("uid-" + name),
			Labels:            map[string]string{"app": owner.Name, appsv1.DefaultDeploymentUniqueLabelKey: "7d9c5b8f6"},
			CreationTimestamp: metav1.NewTime(refTime.Add(-12 * time.Minute)),
			OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner.Name + "-7d9c5b8f6", UID: types.UID("uid-rs-" + owner.Name), Controller: ptr.To(true)}},
		},
		Spec: owner.Spec.Template.Spec,
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
			ContainerStatuses: []corev1.ContainerStatus{cs},
		},
	}
}

// fixture returns the demo story by hand: a snapshot of namespace telemetry and the report the
// engine is meant to give for it, so console tests do not depend on the engine's progress.
func fixture() (*snapshot.Snapshot, *diagnose.Report) {
	ingester := deployment("telemetry-ingester", 5, []corev1.EnvVar{
		{Name: "INGEST_ENDPOINT", Value: "telemetry-intake.internal:9443"},
		{Name: "LOG_LEVEL", Value: "info"},
	}, "registry.example.com/telemetry/ingester@sha256:3b1f9a0c2d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcd")
	collector := deployment("telemetry-collector", 3, nil, "registry.example.com/telemetry/collector@sha256:0000000000000000000000000000000000000000000000000000000000000000")
	worker := deployment("telemetry-worker", 2, []corev1.EnvVar{{Name: "API_TOKEN", ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "worker-credentials"}, Key: "token"},
	}}},
		"registry.example.com/telemetry/worker:1.8.2")
	dashboard := deployment("telemetry-dashboard", 2, nil, "registry.example.com/telemetry/dashboard:4.1.0")
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: "telemetry-ingester-7d9c5b8f6", Namespace: "telemetry",
		UID: "uid-rs-telemetry-ingester", OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: ingester.Name, UID: ingester.UID}},
	}}
	snap := &snapshot.Snapshot{
		ReferenceTime: refTime,
		Namespaces:    []string{"telemetry"},
		Source:        snapshot.SourceInfo{Type: snapshot.SourceDemo},
		Deployments:   []*appsv1.Deployment{ingester, collector, worker, dashboard},
		ReplicaSets:   []*appsv1.ReplicaSet{rs},
	}
	for i := 0; i < 5; i++ {
		snap.Pods = append(snap.Pods, pod(ingester, i, false, 0, ""))
	}
	p0 := snap.Pods[0]
	snap.Events = []*corev1.Event{{
		ObjectMeta:     metav1.ObjectMeta{Name: p0.Name + ".1", Namespace: "telemetry"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "telemetry", Name: p0.Name, UID: p0.UID},
		Reason:         "Unhealthy", Type: corev1.EventTypeWarning, Count: 143,
		Message:       "Readiness probe failed: HTTP probe failed with statuscode: 503",
		LastTimestamp: metav1.NewTime(refTime.Add(-10 * time.Second)),
	}}
	snap.Logs = []snapshot.ContainerLog{
		{
			Namespace: "telemetry", Pod: p0.Name, Container: "telemetry-ingester",
			Lines: []string{"level=info msg=\"starting ingester\" endpoint=telemetry-intake.internal:9443", maliciousLog},
		},
		{
			Namespace: "telemetry", Pod: snap.Pods[1].Name, Container: "telemetry-ingester", Previous: true,
			Lines: []string{"level=info msg=\"shutting down\" signal=terminated"},
		},
	}

	envPath := field.NewPath("spec", "template", "spec", "containers").Index(0).Child("env").Index(0).Child("value")
	young := int64(720)
	last := time.Date(2026, 11, 24, 14, 32, 0, 0, time.UTC)
	rep := &diagnose.Report{
		APIVersion: diagnose.APIVersion, Kind: diagnose.ReportKind, ReferenceTime: refTime,
		Workloads: []diagnose.Diagnosis{
			{
				Kind: "Deployment", Namespace: "telemetry", Name: "telemetry-dashboard", Shape: diagnose.ShapeHealthy,
				Counts: diagnose.Counts{Declared: 2, Existing: 2, Serving: 2}, YoungestCopySeconds: ptr.To(int64(86400)), Cause: diagnose.CauseUnknown,
				Headline: "2 of 2 copies exist · 2 serving",
			},
			{
				Kind: "Deployment", Namespace: "telemetry", Name: "telemetry-ingester", Shape: diagnose.ShapeLiveButIdle,
				Counts: diagnose.Counts{Declared: 5, Existing: 5, Serving: 0}, YoungestCopySeconds: &young, Cause: diagnose.CauseSpec,
				Headline: "5 of 5 copies exist · 0 serving — the loop has converged; nothing is serving",
				Suspects: []diagnose.Suspect{{
					Object: "Deployment/telemetry-ingester", Path: envPath, Element: "INGEST_ENDPOINT",
					Value: "telemetry-intake.internal:9443", PreviousValue: "telemetry-intake.internal:8443", Confidence: diagnose.ConfidenceHigh,
					Reason: "logs say connection refused to :9443; revision 2 changed this value from :8443, which served",
				}},
				Evidence: []diagnose.Evidence{{
					Kind: "ReadinessFailing", Message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
					Source: diagnose.SourceEvent, Objects: []string{"pod/a", "pod/b", "pod/c", "pod/d", "pod/e"}, Count: 143, LastSeen: &last,
				}},
				Revisions: &diagnose.Revisions{Current: "2", LastServing: "1", ChangedPaths: []string{envPath.String()}},
				Detail: &diagnose.Detail{
					CurrentRevision: "2", LastServingRevision: "1",
					Changes: []diagnose.Change{{Path: envPath, Previous: "telemetry-intake.internal:8443", Current: "telemetry-intake.internal:9443"}},
				},
				Fix: "kubectl rollout undo deployment/telemetry-ingester -n telemetry --to-revision=1",
			},
			{
				Kind: "Deployment", Namespace: "telemetry", Name: "telemetry-collector", Shape: diagnose.ShapeNeverStarts,
				Counts: diagnose.Counts{Declared: 3, Existing: 3}, Cause: diagnose.CauseSpec,
				Suspects: []diagnose.Suspect{{
					Object: "Deployment/telemetry-collector", Path: field.NewPath("spec", "template", "spec", "containers").Index(0).Child("image"),
					Value: "registry.example.com/telemetry/collector@sha256:0000", Confidence: diagnose.ConfidenceHigh,
				}},
			},
			{
				Kind: "Deployment", Namespace: "telemetry", Name: "telemetry-worker", Shape: diagnose.ShapeStartsAndDies,
				Counts: diagnose.Counts{Declared: 2, Existing: 2, Restarts: 31}, YoungestCopySeconds: ptr.To(int64(300)), Cause: diagnose.CauseSpec,
				Suspects: []diagnose.Suspect{{
					Object: "Deployment/telemetry-worker", Path: field.NewPath("spec", "template", "spec", "containers").Index(0).Child("env").Index(0).Child("valueFrom", "secretKeyRef", "name"),
					Value: "worker-credentials", Element: "API_TOKEN", Confidence: diagnose.ConfidenceHigh,
				}},
			},
		},
	}
	return snap, rep
}

// staticSource returns the same snapshot every time.
type staticSource struct {
	snap *snapshot.Snapshot
	err  error
}

func (s staticSource) Snapshot(context.Context) (*snapshot.Snapshot, error) { return s.snap, s.err }

// testStyles renders without colour, as a NO_COLOR terminal would.
func testStyles() Styles {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.Ascii)
	r.SetHasDarkBackground(true)
	return DefaultStyles(r)
}

// unicodeTestStyles are testStyles with the glyphs of a terminal with colour, for tests of
// what the Timeline's picture draws rather than of its ASCII fallback.
func unicodeTestStyles() Styles {
	st := testStyles()
	st.Glyphs = UnicodeGlyphs
	return st
}

// readyModel returns a console showing the fixture at w×h.
func readyModel(w, h int) *Model {
	snap, rep := fixture()
	m := New(context.Background(), Options{Source: staticSource{snap: snap}, SourceLabel: "demo", Context: "kind-dev"},
		testStyles(), func() time.Time { return refTime })
	m.Update(windowSize(w, h))
	m.Update(loadedMsg{gen: m.gen, seq: m.seq, data: datasetOf(snap, rep)})
	return m
}

func intstrPort(p int) intstr.IntOrString { return intstr.FromInt32(int32(p)) }

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// syncWriter lets a test read what a running program wrote.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
