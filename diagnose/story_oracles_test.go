package diagnose

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/metamorph"
)

// Oracles of the one-story checker (issue 37) that need the snapshot: they read the facts
// themselves (through test/metamorph, never through the engine), and speak only where the
// facts decide; where they cannot tell, they say nothing.

// Where the diagnosis says a revision served.

var (
	servedWord    = regexp.MustCompile(`\bserved\b`)
	revisionWord  = regexp.MustCompile(`\brevision ([0-9A-Za-z][0-9A-Za-z.-]*[0-9A-Za-z]|[0-9A-Za-z])`)
	servedNegated = regexp.MustCompile(`(never|not|no copy of it has|has yet to have)\s*$`)
)

// servedClaims returns the revisions the diagnosis says served, each with where it says so:
// its last serving revision, and every sentence of the headline, the evidence and the
// timeline in which "served" follows "revision N" without a negation.
func servedClaims(d *Diagnosis) map[string]string {
	out := map[string]string{}
	if d.Revisions != nil && d.Revisions.LastServing != "" {
		out[d.Revisions.LastServing] = "revisions.lastServing"
	}
	texts := []string{d.Headline}
	for _, e := range d.Evidence {
		texts = append(texts, e.Message)
	}
	for _, e := range d.Timeline {
		texts = append(texts, e.Message)
	}
	for _, text := range texts {
		for _, m := range servedWord.FindAllStringIndex(text, -1) {
			before := text[:m[0]]
			if servedNegated.MatchString(before) {
				continue
			}
			revs := revisionWord.FindAllStringSubmatch(before, -1)
			if len(revs) == 0 {
				continue
			}
			rev := revs[len(revs)-1][1]
			if _, ok := out[rev]; !ok {
				out[rev] = strings.TrimSpace(text)
			}
		}
	}
	return out
}

// Bounds of the no-serving-episode oracle: the copies the snapshot shows are a revision's
// first when they were created within firstCopies of it; a copy was Ready in between when its
// Ready condition turned False more than readyBetween after its start; its failure was
// continuous when no quiet gap longer than quietGap separates its signals from its first
// seconds (earlyFailure) to the end of its Ready period.
const (
	firstCopies  = 2 * time.Minute
	readyBetween = 5 * time.Second
	earlyFailure = time.Minute
	quietGap     = 2 * time.Minute
)

// noServingEpisode reports, with the facts that show it, that the Deployment's revision rev
// never served: the snapshot holds every copy it ever had (all created with it), and each was
// never Ready, or signalled the failure from its first seconds without a quiet gap until it
// stopped being Ready (or until now, Ready still). ok is false where the facts cannot tell.
func noServingEpisode(s *snapshot.Snapshot, w metamorph.Workload, rev string) (why string, ok bool) {
	if w.Kind != "Deployment" {
		return "", false
	}
	var rs *appsv1.ReplicaSet
	for _, r := range w.ReplicaSets(s) {
		if metamorph.Revision(r) == rev {
			rs = r
		}
	}
	if rs == nil {
		return "", false
	}
	var pods []*corev1.Pod
	for _, p := range w.Pods(s) {
		for _, o := range p.OwnerReferences {
			if o.UID == rs.UID {
				pods = append(pods, p)
			}
		}
	}
	if len(pods) == 0 {
		return "", false
	}
	var facts []string
	for _, p := range pods {
		if p.CreationTimestamp.Sub(rs.CreationTimestamp.Time) > firstCopies {
			return "", false // earlier copies, unseen, may have served
		}
		start := metamorph.Start(p)
		var ready *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				ready = &p.Status.Conditions[i]
			}
		}
		if ready == nil || ready.Status != corev1.ConditionTrue && ready.LastTransitionTime.Sub(start) <= readyBetween {
			facts = append(facts, p.Name+" was never Ready")
			continue
		}
		end := s.ReferenceTime
		if ready.Status != corev1.ConditionTrue {
			end = ready.LastTransitionTime.Time
		}
		spans := metamorph.Failures(s, p)
		if len(spans) == 0 || spans[0].From.Sub(start) > earlyFailure {
			return "", false
		}
		reach := spans[0].To
		for _, sp := range spans[1:] {
			if sp.From.After(end) {
				break
			}
			if sp.From.Sub(reach) > quietGap {
				return "", false
			}
			if sp.To.After(reach) {
				reach = sp.To
			}
		}
		if end.Sub(reach) > quietGap {
			return "", false
		}
		facts = append(facts, p.Name+" signalled the failure from "+spans[0].From.Sub(start).Round(time.Second).String()+" after its start until it stopped being Ready")
	}
	return strings.Join(facts, "; "), true
}

// servedContradictions lists the revisions the diagnosis says served that the snapshot shows
// never had a serving episode.
func servedContradictions(s *snapshot.Snapshot, d *Diagnosis) []string {
	var out []string
	w := metamorph.Workload{Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}
	for rev, where := range servedClaims(d) {
		if why, ok := noServingEpisode(s, w, rev); ok {
			out = append(out, "revision "+rev+" is said to have served ("+where+"), but it had no serving episode: "+why)
		}
	}
	return out
}

// Progressing in fact.

// rolloutInProgress are the Progressing reasons of a rollout the controller still sees moving
// (pkg/controller/deployment/util: NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated).
var rolloutInProgress = map[string]bool{"NewReplicaSetCreated": true, "FoundNewReplicaSet": true, "ReplicaSetUpdated": true}

// startingReasons are the waiting reasons of a container on its way up, with no error.
var startingReasons = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// progressingInFact reports, with the facts that show it, that the Deployment's rollout is
// moving without an error: the controller says it is progressing inside its deadline, and
// every copy of the new revision is Ready or on its way up (scheduled, pulling, creating)
// with no restart, no failed run and no Warning event about it or its ReplicaSet.
func progressingInFact(s *snapshot.Snapshot, w metamorph.Workload) (why string, ok bool) {
	if w.Kind != "Deployment" {
		return "", false
	}
	var dep *appsv1.Deployment
	for _, d := range s.Deployments {
		if d.Namespace == w.Namespace && d.Name == w.Name {
			dep = d
		}
	}
	rss := w.ReplicaSets(s)
	if dep == nil || len(rss) == 0 {
		return "", false
	}
	var cond *appsv1.DeploymentCondition
	for i := range dep.Status.Conditions {
		if dep.Status.Conditions[i].Type == appsv1.DeploymentProgressing {
			cond = &dep.Status.Conditions[i]
		}
	}
	if cond == nil || cond.Status != corev1.ConditionTrue || !rolloutInProgress[cond.Reason] {
		return "", false
	}
	newRS := rss[len(rss)-1]
	for _, c := range newRS.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			return "", false // ReplicaFailure
		}
	}
	warned := map[string]bool{}
	for _, e := range s.Events {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Namespace == w.Namespace {
			warned[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] = true
		}
	}
	if warned["ReplicaSet/"+newRS.Name] {
		return "", false
	}
	starting := 0
	for _, p := range w.Pods(s) {
		owned := false
		for _, o := range p.OwnerReferences {
			owned = owned || o.UID == newRS.UID
		}
		if !owned {
			continue
		}
		if warned["Pod/"+p.Name] {
			return "", false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return "", false
			}
		}
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			switch {
			case cs.RestartCount > 0, cs.LastTerminationState.Terminated != nil:
				return "", false
			case cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0:
				return "", false
			case cs.State.Waiting != nil && !startingReasons[cs.State.Waiting.Reason]:
				return "", false
			case cs.State.Waiting != nil:
				starting++
			}
		}
	}
	return "Progressing " + cond.Reason + ", and " + strconv.Itoa(starting) + " container(s) of revision " + metamorph.Revision(newRS) + " on their way up with no error", true
}

func TestServedClaims(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"revision 2 changed 1 field(s) since revision 1 served (presumed: revision 1 ran 3h before revision 2 replaced it)", []string{"1"}},
		{"revision 1 rolled out; served (copy search-api-86b54dcc48-77hfb is Ready)", []string{"1"}},
		{"2 of 2 copies exist · 0 serving — revision 1 served, and its copies now start and die", []string{"1"}},
		{"revision 1 is the only revision and no copy of it has served", nil},
		{"revision 2 never served without this failure", nil},
		{"revision 3 changed 2 field(s) since revision nightly-billing-1 served", []string{"nightly-billing-1"}},
	} {
		var got []string
		for rev := range servedClaims(&Diagnosis{Headline: tt.text}) {
			got = append(got, rev)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%q claims %v served, want %v", tt.text, got, tt.want)
		}
	}
}

// TestServedCheckIsLive holds the oracle to the fixture that shows a revision failing from its
// copies' first seconds while Ready for minutes, and to its twin that served for days.
func TestServedCheckIsLive(t *testing.T) {
	for _, tt := range []struct {
		id     string
		caught bool
	}{
		{"fixtures/ready-then-fails", true},
		{"fixtures/upstream-after-serving", false},
	} {
		var vd verdictDir
		for _, v := range verdictDirs(t) {
			if v.ID == tt.id {
				vd = v
			}
		}
		if vd.Dir == "" {
			t.Fatalf("no verdict directory %s", tt.id)
		}
		s := loadDump(t, vd.Dir, loadExpected(t, vd.Dir))
		d := &Diagnosis{
			Kind: "Deployment", Namespace: "fixture-" + strings.TrimPrefix(tt.id, "fixtures/"), Name: "telemetry-ingester",
			Revisions: &Revisions{Current: "2", LastServing: "2"},
		}
		if got := servedContradictions(s, d); (len(got) > 0) != tt.caught {
			t.Errorf("%s: revision 2 said to have served: contradictions %v, want caught %v", tt.id, got, tt.caught)
		}
		d.Revisions.LastServing = "1"
		if got := servedContradictions(s, d); len(got) > 0 {
			t.Errorf("%s: revision 1, which served for hours, is called never served: %v", tt.id, got)
		}
	}
}

// TestProgressingCheckIsLive builds a rollout whose new copy has been pulling its image for
// minutes, then gives it an error.
func TestProgressingCheckIsLive(t *testing.T) {
	build := func(state podState, warn bool) (*snapshot.Snapshot, metamorph.Workload) {
		c := newCluster()
		d := c.deployment("media", 2, 2, "ReplicaSetUpdated", 3*24*time.Hour)
		old := c.replicaSet(d, 1, 2, 3*24*time.Hour, nil)
		c.pod(old, "a", 3*24*time.Hour, running(true))
		c.pod(old, "b", 3*24*time.Hour, running(true))
		cur := c.replicaSet(d, 2, 1, 4*time.Minute, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/media:2.0.0" })
		p := c.pod(cur, "c", 210*time.Second, state)
		c.event("Pod", p.Name, p.UID, corev1.EventTypeNormal, "Pulling", `Pulling image "registry.example/media:2.0.0"`, 1, 200*time.Second)
		if warn {
			c.event("Pod", p.Name, p.UID, corev1.EventTypeWarning, "Failed", `Failed to pull image "registry.example/media:2.0.0": context deadline exceeded`, 1, 10*time.Second)
		}
		return c.s, metamorph.Workload{Kind: "Deployment", Namespace: testNS, Name: "media"}
	}
	if _, ok := progressingInFact(build(waiting("ContainerCreating", ""), false)); !ok {
		t.Error("a copy pulling for 3.5 minutes inside the deadline, with no error, is not progressing")
	}
	if why, ok := progressingInFact(build(waiting("ContainerCreating", ""), true)); ok {
		t.Errorf("a failed pull is called progressing: %s", why)
	}
	if why, ok := progressingInFact(build(waiting("ImagePullBackOff", "Back-off pulling image"), false)); ok {
		t.Errorf("ImagePullBackOff is called progressing: %s", why)
	}
}
