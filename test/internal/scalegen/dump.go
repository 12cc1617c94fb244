package scalegen

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// WriteDump writes the namespace Load would build to dir, in the layout `kubectl-diagnose dump`
// writes, without a cluster: the objects as the API server, the deployment, replicaset and
// endpointslice controllers and the simulated kubelet (kubeletsim.Settle) leave them, and the
// log tails the live source would read (two failing copies of each broken workload). Revision 1
// was applied 30 minutes before now, revision 2 10 minutes before; now is the time of the call.
// dir must not exist or be empty.
func WriteDump(dir string, opts Options) error {
	snap := Snapshot(opts, time.Now())
	if err := dump.Write(dir, snap, false); err != nil {
		return fmt.Errorf("write scale dump: %w", err)
	}
	opts = opts.withDefaults()
	opts.Logf("scalegen: wrote %d Deployments, %d pods and %d events of namespace %s to %s",
		len(snap.Deployments), len(snap.Pods), len(snap.Events), opts.Namespace, dir)
	return nil
}

// Snapshot is the picture WriteDump writes, at now.
func Snapshot(opts Options, now time.Time) *snapshot.Snapshot {
	opts = opts.withDefaults()
	now = now.UTC().Truncate(time.Second)
	g := &dumpGen{
		opts: opts, now: now, world: World(opts),
		rnd:    rand.New(rand.NewPCG(uint64(opts.Deployments), uint64(opts.PodsPer))),
		snap:   &snapshot.Snapshot{Namespaces: []string{opts.Namespace}},
		logged: map[string]int{},
	}
	for i := range Nodes(opts) {
		g.snap.Nodes = append(g.snap.Nodes, g.node(i))
	}
	for _, w := range Plan(opts) {
		g.workload(w)
	}
	return g.snap
}

type dumpGen struct {
	opts  Options
	now   time.Time
	world *kubeletsim.World
	rnd   *rand.Rand
	snap  *snapshot.Snapshot
	next  int // pods placed, for node spreading
	ips   int
	rv    int
	// logged counts, per ReplicaSet, the copies whose log tails are in the snapshot.
	logged map[string]int
}

func (g *dumpGen) uid() types.UID {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(g.rnd.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
}

// suffix is the 5 characters GenerateName appends (utilrand.String's alphabet).
func (g *dumpGen) suffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[g.rnd.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *dumpGen) resourceVersion() string {
	g.rv++
	return strconv.Itoa(200 + g.rv)
}

func (g *dumpGen) meta(name string, created time.Time) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: g.opts.Namespace, UID: g.uid(), ResourceVersion: g.resourceVersion(),
		CreationTimestamp: metav1.NewTime(created),
	}
}

func (g *dumpGen) node(i int) *corev1.Node {
	name := fmt.Sprintf("%s-node-%d", g.opts.Namespace, i+1)
	zone := "sim-1" + string(rune('a'+i%3))
	created := g.now.Add(-48 * time.Hour)
	m := metav1.ObjectMeta{
		Name: name, UID: g.uid(), ResourceVersion: g.resourceVersion(), CreationTimestamp: metav1.NewTime(created),
		Labels: map[string]string{
			"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "sim.xlarge",
			"topology.kubernetes.io/region": "sim-1", "topology.kubernetes.io/zone": zone,
		},
		Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
	}
	hb, tr := metav1.NewTime(g.now.Add(-4*time.Minute)), metav1.NewTime(created)
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, LastHeartbeatTime: hb, LastTransitionTime: tr, Reason: reason, Message: msg}
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("95491281146"),
	}
	capacity := alloc.DeepCopy()
	capacity[corev1.ResourceCPU] = resource.MustParse("4090m")
	cidr := kubeletsim.NodeSubnet(i+1) + ".0/24"
	return &corev1.Node{
		ObjectMeta: m,
		Spec:       corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("%032x", g.rnd.Uint64()), SystemUUID: string(g.uid()), BootID: string(g.uid()),
				KernelVersion: "6.14.0-1017-aws", OSImage: "Ubuntu 24.04.3 LTS", ContainerRuntimeVersion: "containerd://2.1.5",
				KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// defaulted is a pod template as the API server stores it in a Deployment or ReplicaSet
// (SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Probe).
func defaulted(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	t = *t.DeepCopy()
	s := &t.Spec
	s.RestartPolicy = corev1.RestartPolicyAlways
	s.TerminationGracePeriodSeconds = ptr.To[int64](30)
	s.DNSPolicy = corev1.DNSClusterFirst
	s.SecurityContext = &corev1.PodSecurityContext{}
	s.SchedulerName = corev1.DefaultSchedulerName
	for i := range s.Containers {
		c := &s.Containers[i]
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if p := c.ReadinessProbe; p != nil {
			p.TimeoutSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 1, 3
			if p.HTTPGet != nil {
				p.HTTPGet.Scheme = corev1.URISchemeHTTP
			}
		}
	}
	return t
}

// templateHash is a pod-template-hash: the hash of the template encoded as the controller
// encodes it (controller.ComputeHash hashes the spew-printed template; any stable hash of the
// template serves the same purpose here).
func templateHash(t corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t)
	_, _ = h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// revisionTimes: revision 1 applied 30 minutes ago, revision 2 10 minutes ago.
func (g *dumpGen) applied(rev int) time.Time {
	if rev == 2 {
		return g.now.Add(-10 * time.Minute)
	}
	return g.now.Add(-30 * time.Minute)
}

// rs is one revision's ReplicaSet with the pods it keeps.
type rs struct {
	obj  *appsv1.ReplicaSet
	pods []*corev1.Pod
}

func (g *dumpGen) workload(w Workload) {
	p := g.opts.PodsPer
	surge := (p + 3) / 4
	unavailable := p / 4
	created := g.applied(1)
	d := deployment(w, g.opts)
	d.ObjectMeta = g.meta(w.Name, created)
	d.Labels = map[string]string{"app": w.Name}
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%")),
	}}
	d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	d.Spec.Template = defaulted(template(w, w.Revisions))
	d.Generation = int64(w.Revisions)
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": strconv.Itoa(w.Revisions)}
	svc := g.service(w, created)

	var sets []*rs
	brokenRollout := w.Revisions == 2 && (w.Fault == FaultImage || w.Fault == FaultCrash)
	switch {
	case w.Revisions == 1:
		sets = append(sets, g.replicaSet(w, d, 1, p, p, 1))
		g.scaled(d, sets[0].obj.Name, 0, p, created)
	case brokenRollout:
		old := g.replicaSet(w, d, 1, p-unavailable, p, 2)
		cur := g.replicaSet(w, d, 2, surge+unavailable, surge+unavailable, 2)
		sets = append(sets, old, cur)
		g.scaled(d, old.obj.Name, 0, p, created)
		g.scaled(d, cur.obj.Name, 0, surge, g.applied(2))
		g.scaled(d, old.obj.Name, p, p-unavailable, g.applied(2))
		g.scaled(d, cur.obj.Name, surge, surge+unavailable, g.applied(2))
	default:
		old := g.replicaSet(w, d, 1, 0, p, 3)
		cur := g.replicaSet(w, d, 2, p, p, 2)
		sets = append(sets, old, cur)
		g.scaled(d, old.obj.Name, 0, p, created)
		g.scaled(d, cur.obj.Name, 0, surge, g.applied(2))
		g.scaled(d, old.obj.Name, p, 0, g.applied(2).Add(5*time.Second))
		g.scaled(d, cur.obj.Name, surge, p, g.applied(2).Add(5*time.Second))
	}
	cur := sets[len(sets)-1]
	var total, ready, updated int32
	for _, s := range sets {
		total += *s.obj.Spec.Replicas
		ready += s.obj.Status.ReadyReplicas
	}
	updated = cur.obj.Status.Replicas
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: total, UpdatedReplicas: updated,
		ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: total - ready, TerminatingReplicas: ptr.To[int32](0),
	}
	if total-ready < 0 {
		d.Status.UnavailableReplicas = 0
	}
	cond := func(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, at time.Time) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{
			Type: t, Status: s, Reason: reason, Message: msg,
			LastUpdateTime: metav1.NewTime(at), LastTransitionTime: metav1.NewTime(at),
		}
	}
	last := g.applied(w.Revisions)
	deadline := last.Add(time.Duration(g.opts.ProgressDeadlineSeconds) * time.Second)
	if int(ready) >= p-unavailable {
		d.Status.Conditions = append(d.Status.Conditions, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue,
			"MinimumReplicasAvailable", "Deployment has minimum availability.", created.Add(3*time.Second)))
	} else {
		d.Status.Conditions = append(d.Status.Conditions, cond(appsv1.DeploymentAvailable, corev1.ConditionFalse,
			"MinimumReplicasUnavailable", "Deployment does not have minimum availability.", created))
	}
	if int(cur.obj.Status.AvailableReplicas) == p {
		c := cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable",
			fmt.Sprintf("ReplicaSet %q has successfully progressed.", cur.obj.Name), last.Add(5*time.Second))
		c.LastTransitionTime = metav1.NewTime(created)
		d.Status.Conditions = append(d.Status.Conditions, c)
	} else {
		d.Status.Conditions = append(d.Status.Conditions, cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded",
			fmt.Sprintf("ReplicaSet %q has timed out progressing.", cur.obj.Name), deadline))
	}
	g.snap.Deployments = append(g.snap.Deployments, d)
	g.snap.Services = append(g.snap.Services, svc)
	var all []*corev1.Pod
	for _, s := range sets {
		g.snap.ReplicaSets = append(g.snap.ReplicaSets, s.obj)
		all = append(all, s.pods...)
	}
	g.snap.EndpointSlices = append(g.snap.EndpointSlices, g.endpointSlice(w, svc, all, created))
}

// scaled records the deployment controller's ScalingReplicaSet event.
func (g *dumpGen) scaled(d *appsv1.Deployment, set string, from, to int, at time.Time) {
	verb := "up"
	if to < from {
		verb = "down"
	}
	g.event(objectRef("Deployment", "apps/v1", d.ObjectMeta), "deployment-controller", corev1.EventTypeNormal,
		"ScalingReplicaSet", fmt.Sprintf("Scaled %s replica set %s from %d to %d", verb, set, from, to), 1, at, at)
}

func objectRef(kind, apiVersion string, m metav1.ObjectMeta) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: kind, Namespace: m.Namespace, Name: m.Name, UID: m.UID, APIVersion: apiVersion, ResourceVersion: m.ResourceVersion}
}

// event records a controller's core/v1 Event (no host; reportingInstance empty, as
// kube-controller-manager writes them).
func (g *dumpGen) event(ref corev1.ObjectReference, component, etype, reason, msg string, count int32, first, last time.Time) {
	m := g.meta(fmt.Sprintf("%s.%x", ref.Name, first.UnixNano()+int64(len(g.snap.Events))), last)
	g.snap.Events = append(g.snap.Events, &corev1.Event{
		ObjectMeta: m, InvolvedObject: ref, Reason: reason, Message: msg,
		Source: corev1.EventSource{Component: component}, FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(last),
		Count: count, Type: etype, ReportingController: component,
	})
}

// replicaSet builds revision rev's ReplicaSet keeping keep pods, of which it created created
// (its own SuccessfulCreate and, for pods since removed, SuccessfulDelete events), at the given
// generation.
func (g *dumpGen) replicaSet(w Workload, d *appsv1.Deployment, rev, keep, created int, generation int64) *rs {
	tmpl := defaulted(template(w, rev))
	hash := templateHash(tmpl)
	tmpl.Labels = map[string]string{"app": w.Name, "pod-template-hash": hash}
	at := g.applied(rev)
	m := g.meta(w.Name+"-"+hash, at)
	m.Generation = generation
	m.Labels = map[string]string{"app": w.Name, "pod-template-hash": hash}
	p := g.opts.PodsPer
	m.Annotations = map[string]string{
		"deployment.kubernetes.io/desired-replicas": strconv.Itoa(p),
		"deployment.kubernetes.io/max-replicas":     strconv.Itoa(p + (p+3)/4),
		"deployment.kubernetes.io/revision":         strconv.Itoa(rev),
	}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	obj := &appsv1.ReplicaSet{
		ObjectMeta: m,
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(keep)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.Name, "pod-template-hash": hash}},
			Template: tmpl,
		},
	}
	out := &rs{obj: obj}
	ref := objectRef("ReplicaSet", "apps/v1", m)
	for k := range created {
		name := obj.Name + "-" + g.suffix()
		msg := "Created pod: " + name
		if k+1 >= 10 {
			// The recorder's aggregator combines the tenth and later similar events.
			msg = "(combined from similar events): " + msg
		}
		if k+1 <= 10 || k+1 == created {
			g.event(ref, "replicaset-controller", corev1.EventTypeNormal, "SuccessfulCreate", msg, int32(max(1, k+1-9)), at, at.Add(time.Second))
		}
		if k >= keep {
			g.event(ref, "replicaset-controller", corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+name, 1,
				g.applied(2).Add(5*time.Second), g.applied(2).Add(5*time.Second))
			continue
		}
		out.pods = append(out.pods, g.pod(obj, name, at.Add(time.Second)))
	}
	for _, pod := range out.pods {
		obj.Status.Replicas++
		obj.Status.FullyLabeledReplicas++
		if podReady(pod) {
			obj.Status.ReadyReplicas++
			obj.Status.AvailableReplicas++
		}
	}
	obj.Status.TerminatingReplicas = ptr.To[int32](0)
	obj.Status.ObservedGeneration = generation
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pod is one copy as the API server admits it (service account volume, default tolerations,
// priority) and binds it (node, topology labels), with the status and events of
// kubeletsim.Settle.
func (g *dumpGen) pod(set *appsv1.ReplicaSet, name string, created time.Time) *corev1.Pod {
	n := g.snap.Nodes[g.next%len(g.snap.Nodes)]
	g.next++
	m := g.meta(name, created)
	m.GenerateName = set.Name + "-"
	m.Generation = 1
	m.Labels = map[string]string{
		"topology.kubernetes.io/region": n.Labels["topology.kubernetes.io/region"],
		"topology.kubernetes.io/zone":   n.Labels["topology.kubernetes.io/zone"],
	}
	for k, v := range set.Spec.Template.Labels {
		m.Labels[k] = v
	}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: set.Name, UID: set.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	spec := *set.Spec.Template.Spec.DeepCopy()
	vol := "kube-api-access-" + g.suffix()
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
		DefaultMode: ptr.To[int32](420),
	}}})
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, corev1.VolumeMount{
			Name: vol, ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
		})
	}
	spec.ServiceAccountName, spec.DeprecatedServiceAccount = "default", "default"
	spec.NodeName = n.Name
	spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
	}
	spec.Priority = ptr.To[int32](0)
	spec.EnableServiceLinks = ptr.To(true)
	spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	pod := &corev1.Pod{ObjectMeta: m, Spec: spec}
	pod.Status.QOSClass = corev1.PodQOSBurstable
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created)}}
	g.ips++
	ip := fmt.Sprintf("10.%d.%d.%d", 244+g.ips/65000, (g.ips/250)%256, g.ips%250+2)
	st := kubeletsim.Settle(g.world, pod, n.Name, ip, created.Add(time.Second), g.now)
	pod.Status = st.Status
	g.snap.Pods = append(g.snap.Pods, pod)
	for _, ev := range st.Events {
		ev.UID, ev.ResourceVersion, ev.CreationTimestamp = g.uid(), g.resourceVersion(), ev.FirstTimestamp
		g.snap.Events = append(g.snap.Events, ev)
	}
	// The live source reads the tails of two failing copies per workload.
	if len(st.Events) > 0 && g.logged[set.Name] < 2 {
		g.logged[set.Name]++
		for _, l := range st.Logs {
			g.snap.Logs = append(g.snap.Logs, snapshot.ContainerLog{
				Namespace: pod.Namespace, Pod: pod.Name, Container: l.Container, Previous: l.Previous, Lines: l.Lines,
			})
		}
	}
	return pod
}

func (g *dumpGen) service(w Workload, created time.Time) *corev1.Service {
	svc := service(w, g.opts)
	svc.ObjectMeta = g.meta(w.Name, created)
	svc.Labels = map[string]string{"app": w.Name}
	ip := fmt.Sprintf("10.96.%d.%d", 1+w.Index/250, w.Index%250+2)
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	return svc
}

// endpointSlice is the endpointslice controller's slice for svc: every pod it selects that has
// an IP, ready and serving as the pod's Ready condition says.
func (g *dumpGen) endpointSlice(w Workload, svc *corev1.Service, pods []*corev1.Pod, created time.Time) *discoveryv1.EndpointSlice {
	m := g.meta(svc.Name+"-"+g.suffix(), created)
	m.GenerateName = svc.Name + "-"
	m.Labels = map[string]string{
		"app": w.Name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io", discoveryv1.LabelServiceName: svc.Name,
	}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	es := &discoveryv1.EndpointSlice{ObjectMeta: m, AddressType: discoveryv1.AddressTypeIPv4}
	zones := map[string]string{}
	for _, n := range g.snap.Nodes {
		zones[n.Name] = n.Labels["topology.kubernetes.io/zone"]
	}
	for _, p := range pods {
		if !selects(svc.Spec.Selector, p.Labels) || p.Status.PodIP == "" {
			continue
		}
		ready := podReady(p)
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready), Serving: ptr.To(ready), Terminating: ptr.To(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
			NodeName:   ptr.To(p.Spec.NodeName),
			Zone:       ptr.To(zones[p.Spec.NodeName]),
		})
	}
	if len(es.Endpoints) == 0 {
		es.Annotations = map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": created.Format(time.RFC3339)}
		return es
	}
	es.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}}
	return es
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
