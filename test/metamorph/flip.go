package metamorph

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// eventTTL is how long the API server keeps an event by default (--event-ttl).
const eventTTL = time.Hour

// ServeThenFail returns a copy of s in which w's only revision served for 'served' before the
// same failure began: the construction behind the variant whose cause must flip to dependency.
//
// The moment C just before the failure's first fact (the copies' creation, the first Warning
// event about the workload, its ReplicaSet or its copies, a failure condition) splits the
// history. Everything before C, and the Deployment's and ReplicaSet's own creation and spec
// writes, move back by 'served'; the rollout's ScalingReplicaSet events go with them, and
// events past the API server's TTL are dropped. The Deployment then records the episode as
// its controller would have: the rollout completed (Progressing NewReplicaSetAvailable) right
// after the ReplicaSet was created, and the Deployment stayed Available until C, when the
// copies it has now replaced the ones that served. The copies and every fact from C on stay.
//
// Only a Deployment with a single ReplicaSet can be turned so: other kinds keep no condition
// that records a serving episode, and a second revision would be a rollout, not the same
// revision failing.
func ServeThenFail(s *snapshot.Snapshot, w Workload, served time.Duration) (*snapshot.Snapshot, error) {
	if w.Kind != "Deployment" {
		return nil, notApplicable("a %s keeps no condition that records a serving episode", w.Kind)
	}
	dep := w.deployment(s)
	if dep == nil {
		return nil, notApplicable("the Deployment is not in the snapshot")
	}
	rss := w.ReplicaSets(s)
	switch {
	case len(rss) == 0:
		return nil, notApplicable("no ReplicaSet in the snapshot: its revisions cannot be read")
	case len(rss) > 1:
		return nil, notApplicable("%d revisions: the failure came with a rollout", len(rss))
	}
	rs := rss[0]
	var cut time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (cut.IsZero() || t.Before(cut)) {
			cut = t
		}
	}
	pods := w.Pods(s)
	podNames := map[string]bool{}
	for _, p := range pods {
		earliest(p.CreationTimestamp.Time)
		podNames[p.Name] = true
	}
	for _, e := range s.Events {
		o := e.InvolvedObject
		about := o.Namespace == w.Namespace && (o.Kind == "Deployment" && o.Name == dep.Name ||
			o.Kind == "ReplicaSet" && o.Name == rs.Name || o.Kind == "Pod" && podNames[o.Name])
		if about && e.Type == corev1.EventTypeWarning {
			earliest(eventFirst(e))
		}
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue ||
			c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
			earliest(c.LastTransitionTime.Time)
		}
	}
	for _, c := range rs.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			earliest(c.LastTransitionTime.Time)
		}
	}
	if cut.IsZero() {
		return nil, notApplicable("no fact dates the failure's start")
	}
	cut = cut.Add(-time.Second)
	back := func(t time.Time) time.Time {
		if t.Before(cut) {
			return t.Add(-served)
		}
		return t
	}
	c := Clone(s)
	mapTimes(c, back)
	dep, rs = w.deployment(c), w.ReplicaSets(c)[0]
	for _, m := range []*metav1.ObjectMeta{&dep.ObjectMeta, &rs.ObjectMeta} {
		if !m.CreationTimestamp.Before(&metav1.Time{Time: cut}) {
			m.CreationTimestamp = metav1.NewTime(m.CreationTimestamp.Add(-served))
		}
		for i := range m.ManagedFields {
			if f := &m.ManagedFields[i]; f.Subresource == "" && f.Time != nil && !f.Time.Before(&metav1.Time{Time: cut}) {
				f.Time = &metav1.Time{Time: f.Time.Add(-served)}
			}
		}
	}
	ref := c.ReferenceTime
	events := c.Events[:0]
	for _, e := range c.Events {
		if e.InvolvedObject.Kind == "Deployment" && e.InvolvedObject.Name == dep.Name && e.Reason == "ScalingReplicaSet" && !eventFirst(e).Before(cut) {
			continue // the rollout's own scaling, now 'served' ago and past the TTL
		}
		if ref.Sub(eventLast(e)) > eventTTL {
			continue
		}
		events = append(events, e)
	}
	c.Events = events
	completed(dep, rs.Name, rs.CreationTimestamp.Add(20*time.Second))
	if cond := deploymentCondition(dep, appsv1.DeploymentProgressing); cond != nil && cond.Reason == "NewReplicaSetAvailable" {
		// True since the first rollout began: long before the failure.
		cond.LastTransitionTime = dep.CreationTimestamp
		cond.LastUpdateTime = metav1.NewTime(rs.CreationTimestamp.Add(20 * time.Second))
	}
	if cond := deploymentCondition(dep, appsv1.DeploymentAvailable); cond != nil && cond.Status != corev1.ConditionTrue && cond.LastTransitionTime.Time.Before(cut.Add(time.Second)) {
		cond.LastTransitionTime = metav1.NewTime(cut.Add(time.Second))
		cond.LastUpdateTime = cond.LastTransitionTime
	}
	return c, nil
}
