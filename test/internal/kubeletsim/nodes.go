package kubeletsim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
)

// nodeIP is every simulated node's InternalIP: the API server reaches the kubelet log endpoint
// there, so it must be loopback.
const nodeIP = "127.0.0.1"

// NodeSpec describes one simulated node.
type NodeSpec struct {
	Name string
	// Labels are added to the standard ones (kubernetes.io/hostname, os, arch).
	Labels map[string]string
	Taints []corev1.Taint
	// Allocatable: cpu, memory, pods. Default 4 CPUs, 16Gi, 110 pods. Capacity is a little more.
	Allocatable corev1.ResourceList
	// Unschedulable cordons the node.
	Unschedulable bool
}

// DefaultNodes returns n nodes named <prefix>-<i>, spread over zones a, b, c of region sim-1.
func DefaultNodes(prefix string, n int) []NodeSpec {
	out := make([]NodeSpec, 0, n)
	for i := range n {
		zone := "sim-1" + string(rune('a'+i%3))
		out = append(out, NodeSpec{
			Name: fmt.Sprintf("%s-%d", prefix, i+1),
			Labels: map[string]string{
				"topology.kubernetes.io/region":    "sim-1",
				"topology.kubernetes.io/zone":      zone,
				"node.kubernetes.io/instance-type": "sim.xlarge",
			},
		})
	}
	return out
}

// node is the live state of one simulated node.
type node struct {
	spec    NodeSpec
	index   int
	created time.Time
	events  *recorder

	info corev1.NodeSystemInfo // fixed at registration, like a boot

	mu     sync.Mutex
	nextIP int
	images map[string]int64 // normalized ref -> size, for status.images and "already present"
}

func (n *node) allocatable() corev1.ResourceList {
	a := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range n.spec.Allocatable {
		a[k] = v
	}
	a[corev1.ResourceEphemeralStorage] = resource.MustParse("95491281146")
	return a
}

// NodeSubnet is the first three octets of node index's /24 pod CIDR: 10.244.<index>, carried
// into 10.245 and on past 255 nodes, as a cluster CIDR of 10.244.0.0/14 would give them.
func NodeSubnet(index int) string {
	return fmt.Sprintf("10.%d.%d", 244+index/256, index%256)
}

func (n *node) allocIP() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextIP++
	return fmt.Sprintf("%s.%d", NodeSubnet(n.index), n.nextIP+1)
}

func (n *node) hasImage(ref string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.images[ref]
	return ok
}

func (n *node) addImage(ref string, size int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.images[ref] = size
}

// register creates (or recreates) the Node object and its first status, as a kubelet does at
// start. The node lifecycle controller does not run, so no not-ready taint needs lifting.
func (s *Sim) register(ctx context.Context, n *node) error {
	nodes := s.cs.CoreV1().Nodes()
	err := nodes.Delete(ctx, n.spec.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete stale node %s: %w", n.spec.Name, err)
	}
	labels := map[string]string{
		"beta.kubernetes.io/arch": "amd64",
		"beta.kubernetes.io/os":   "linux",
		"kubernetes.io/arch":      "amd64",
		"kubernetes.io/hostname":  n.spec.Name,
		"kubernetes.io/os":        "linux",
	}
	for k, v := range n.spec.Labels {
		labels[k] = v
	}
	obj := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   n.spec.Name,
			Labels: labels,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:       NodeSubnet(n.index) + ".0/24",
			PodCIDRs:      []string{NodeSubnet(n.index) + ".0/24"},
			Taints:        n.spec.Taints,
			Unschedulable: n.spec.Unschedulable,
		},
	}
	if _, err := nodes.Create(ctx, obj, metav1.CreateOptions{FieldManager: "kubelet"}); err != nil {
		return fmt.Errorf("create node %s: %w", n.spec.Name, err)
	}
	n.created = s.now()
	n.info = corev1.NodeSystemInfo{
		MachineID: strings.ReplaceAll(string(uuid.NewUUID()), "-", ""), SystemUUID: string(uuid.NewUUID()),
		BootID: string(uuid.NewUUID()), KernelVersion: "6.14.0-1017-aws", OSImage: "Ubuntu 24.04.3 LTS",
		ContainerRuntimeVersion: "containerd://2.1.5", KubeletVersion: "v1.37.2",
		OperatingSystem: "linux", Architecture: "amd64",
	}
	if err := s.writeNodeStatus(ctx, n, n.created); err != nil {
		return err
	}
	// The TaintNodesByCondition admission plugin put node.kubernetes.io/not-ready:NoSchedule on
	// the new node; the node lifecycle controller (not running here) lifts it once the node
	// reports Ready. Play that, leaving only the taints of the spec.
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"taints": n.spec.Taints}})
	if err != nil {
		return err
	}
	_, err = nodes.Patch(ctx, n.spec.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kube-controller-manager"})
	if err != nil {
		return fmt.Errorf("lift not-ready taint of node %s: %w", n.spec.Name, err)
	}
	return nil
}

// writeNodeStatus patches the node's status with a fresh heartbeat.
func (s *Sim) writeNodeStatus(ctx context.Context, n *node, heartbeat time.Time) error {
	alloc := n.allocatable()
	capacity := corev1.ResourceList{}
	for k, v := range alloc {
		capacity[k] = v
	}
	if cpu, ok := alloc[corev1.ResourceCPU]; ok {
		c := cpu.DeepCopy()
		c.Add(resource.MustParse("90m"))
		capacity[corev1.ResourceCPU] = c
	}
	hb, tr := metav1.NewTime(heartbeat), metav1.NewTime(n.created)
	cond := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: status, LastHeartbeatTime: hb, LastTransitionTime: tr, Reason: reason, Message: msg}
	}
	n.mu.Lock()
	var images []corev1.ContainerImage
	for ref, size := range n.images {
		_, id := statusImage(ref)
		images = append(images, corev1.ContainerImage{Names: []string{id, ref}, SizeBytes: size})
	}
	n.mu.Unlock()
	status := corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: alloc,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP},
			{Type: corev1.NodeHostName, Address: n.spec.Name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(s.logPort)}},
		NodeInfo:        n.info,
		Images:          images,
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = s.cs.CoreV1().Nodes().Patch(ctx, n.spec.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubelet"}, "status")
	if err != nil {
		return fmt.Errorf("node %s status: %w", n.spec.Name, err)
	}
	return nil
}

// heartbeat renews each node's Lease every 10 s and rewrites its status every 5 min (simulated),
// like the kubelet's nodeStatusUpdateFrequency / nodeStatusReportFrequency.
func (s *Sim) heartbeat(ctx context.Context) {
	// At high time scales a real second is plenty: nothing reads leases closer than that.
	leaseEvery := max(s.scaled(10*time.Second), time.Second)
	statusEvery := s.scaled(5 * time.Minute)
	lastStatus := s.now()
	t := time.NewTicker(leaseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := s.now()
		for _, n := range s.nodes {
			s.renewLease(ctx, n, now)
		}
		if now.Sub(lastStatus) >= statusEvery {
			lastStatus = now
			for _, n := range s.nodes {
				if err := s.writeNodeStatus(ctx, n, now); err != nil && ctx.Err() == nil {
					s.logf("kubeletsim: %v", err)
				}
			}
		}
	}
}

func (s *Sim) renewLease(ctx context.Context, n *node, now time.Time) {
	leases := s.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	renew := metav1.NewMicroTime(now)
	l, err := leases.Get(ctx, n.spec.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.spec.Name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(n.spec.Name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &renew,
			},
		}, metav1.CreateOptions{FieldManager: "kubelet"})
	} else if err == nil {
		l.Spec.RenewTime = &renew
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: "kubelet"})
	}
	if err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		s.logf("kubeletsim: lease %s: %v", n.spec.Name, err)
	}
}
