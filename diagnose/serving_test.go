package diagnose

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seriesEvent adds a kubelet event about pod p whose series began first ago and was last
// written last ago, as client-go's EventCorrelator keeps it: one object, its count and first
// time carried however long the series lasts.
func (c *cluster) seriesEvent(p *corev1.Pod, typ, reason, message string, count int32, first, last time.Duration) {
	c.s.Events = append(c.s.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", p.Name, c.uid), Namespace: testNS, UID: c.nextUID()},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: testNS, Name: p.Name, UID: p.UID},
		Type:           typ, Reason: reason, Message: message, Count: count,
		FirstTimestamp: ago(first), LastTimestamp: ago(last),
	})
}

// TestLongLivedStatefulSetServed: a StatefulSet of one revision keeps no record of serving (no
// Available condition; its current and update revisions are the same), and copies that restarted
// keep only their last Ready change. Their events do: the kubelet's series of container starts,
// begun at each copy's start days ago, and the first back-off minutes ago date a quiet run of
// days, so the revision served and a rejected password now is the dependency's. Where the
// events cannot be trusted to reach back to the copies' starts (every series began minutes ago,
// as after a kubelet restart), or say the copies failed from their starts, nothing shows it
// served.
func TestLongLivedStatefulSetServed(t *testing.T) {
	const age = 8 * 24 * time.Hour
	const rejected = `psycopg.OperationalError: connection failed: connection to server at "10.96.14.9", port 5432 failed: FATAL:  password authentication failed for user "ledger_app"`
	tests := []struct {
		name string
		// startsSeries and backOffSeries are when the Started and BackOff series began.
		startsSeries, backOffSeries time.Duration
		served                      bool
		cause                       Cause
	}{
		{"started days ago, failing for minutes", age - 5*time.Second, 12 * time.Minute, true, CauseDependency},
		{"the first start after a 90 s image pull", age - 95*time.Second, 12 * time.Minute, true, CauseDependency},
		{"no event reaches back to the copies' starts", 40 * time.Minute, 12 * time.Minute, false, CauseUnknown},
		{"failing since the copies started", age - 5*time.Second, age - 10*time.Second, false, CauseUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			st := &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: "ledger", Namespace: testNS, UID: c.nextUID(), Generation: 1, CreationTimestamp: ago(age + time.Minute)},
				Spec: appsv1.StatefulSetSpec{
					Replicas: int32p(2), Template: basicTemplate("ledger"),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ledger"}},
				},
			}
			st.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{
				{Name: "PGHOST", Value: "ledger-pg.finance.svc"},
				{Name: "PGUSER", Value: "ledger_app"},
				{Name: "PGPASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "ledger-pg"}, Key: "password",
				}}},
			}
			c.controllerRevision(st, "StatefulSet", 1, "64df6bdf9b", st.Spec.Template, age+time.Minute)
			st.Status = appsv1.StatefulSetStatus{
				ObservedGeneration: 1, Replicas: 2, CurrentReplicas: 2, UpdatedReplicas: 2,
				CurrentRevision: "ledger-64df6bdf9b", UpdateRevision: "ledger-64df6bdf9b",
			}
			c.s.StatefulSets = append(c.s.StatefulSets, st)
			for _, n := range []string{"ledger-0", "ledger-1"} {
				p := c.ownedPod(st, "StatefulSet", n, "ledger-64df6bdf9b", age, crashLooping("Error", 1, 7))
				p.Spec.Containers[0].Env = st.Spec.Template.Spec.Containers[0].Env
				setReady(p, false, ago(12*time.Minute))
				c.seriesEvent(p, corev1.EventTypeNormal, "Started", "Container started", 8, tc.startsSeries, 2*time.Minute)
				c.seriesEvent(p, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container app in pod "+n, 14, tc.backOffSeries, 20*time.Second)
				c.logs(p, "2026-11-24 11:58:00,120 CRITICAL ledger.worker: cannot connect to the database, exiting", rejected)
			}
			d := Diagnose(c.s).Find("StatefulSet", testNS, "ledger")
			if d == nil {
				t.Fatal("no diagnosis")
			}
			if served := d.Revisions != nil && d.Revisions.LastServing == "1"; served != tc.served {
				t.Errorf("served = %v (revisions %+v), want %v", served, d.Revisions, tc.served)
			}
			if d.Cause != tc.cause {
				t.Errorf("cause = %s, want %s", d.Cause, tc.cause)
			}
			if len(d.Suspects) == 0 || d.Suspects[0].Path.String() != "spec.template.spec.containers[0].env[2].valueFrom.secretKeyRef.key" {
				t.Errorf("suspects = %+v, want the password's secretKeyRef first", d.Suspects)
			}
		})
	}
}
