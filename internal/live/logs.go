package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// copiesPerOwner bounds how many failing copies of one workload have their logs read: the same
// fault on every copy is the signature of a spec fault, so a few copies show it as well as all.
const copiesPerOwner = 3

// maxLogRequests bounds the log requests of one snapshot, so a cluster with hundreds of broken
// workloads is still read in seconds; the rest are named in the visibility list.
const maxLogRequests = 200

// logRequest is one container log tail to fetch.
type logRequest struct {
	namespace, pod, container string
	previous                  bool
}

// failingLogRequests picks the containers whose logs can explain a failure: containers of copies
// that are not ready, waiting or restarted. A container that never ran has no log to read, so
// only a running or terminated instance (current) or a terminated last instance (previous) is asked for.
func failingLogRequests(pods []*corev1.Pod) []logRequest {
	byOwner := map[types.UID][]*corev1.Pod{}
	var owners []types.UID
	for _, p := range pods {
		if p.Spec.NodeName == "" || !failing(p) {
			continue
		}
		owner := p.UID
		if ref := metav1.GetControllerOf(p); ref != nil {
			owner = ref.UID
		}
		if _, seen := byOwner[owner]; !seen {
			owners = append(owners, owner)
		}
		byOwner[owner] = append(byOwner[owner], p)
	}
	var reqs []logRequest
	for _, owner := range owners {
		ps := byOwner[owner]
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
		if len(ps) > copiesPerOwner {
			ps = ps[:copiesPerOwner]
		}
		for _, p := range ps {
			statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
			for _, cs := range statuses {
				if cs.State.Running != nil || cs.State.Terminated != nil {
					reqs = append(reqs, logRequest{p.Namespace, p.Name, cs.Name, false})
				}
				if cs.LastTerminationState.Terminated != nil || cs.RestartCount > 0 {
					reqs = append(reqs, logRequest{p.Namespace, p.Name, cs.Name, true})
				}
			}
		}
	}
	return reqs
}

// failing reports whether a copy is not ready, has a waiting container, or has restarted.
func failing(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded {
		return false
	}
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil || cs.RestartCount > 0 {
			return true
		}
	}
	return false
}

// readLogs fetches the tails of failing copies' containers. A log the kubelet cannot give
// (forbidden, node gone) is recorded once per namespace in the visibility list and the read goes on.
func (s *Source) readLogs(ctx context.Context, pods []*corev1.Pod, vis []snapshot.Visibility, prog *progress) ([]snapshot.ContainerLog, []snapshot.Visibility) {
	reqs, vis := capLogRequests(failingLogRequests(pods), vis)
	logs, errs := s.fetchLogs(ctx, reqs, prog)
	return collectLogs(reqs, logs, errs, vis)
}

// fetchLogs fetches the tails in parallel; logs[i] or errs[i] answers reqs[i]. Each tail read
// is reported to prog (which may be nil) as one more of "logs".
func (s *Source) fetchLogs(ctx context.Context, reqs []logRequest, prog *progress) ([]*snapshot.ContainerLog, []error) {
	tail, limit := s.opts.LogTailLines, s.opts.LogLimitBytes
	if tail <= 0 {
		tail = DefaultLogTailLines
	}
	if limit <= 0 {
		limit = DefaultLogLimitBytes
	}
	logs := make([]*snapshot.ContainerLog, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelism)
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			raw, err := s.client.CoreV1().Pods(r.namespace).GetLogs(r.pod, &corev1.PodLogOptions{
				Container:  r.container,
				Previous:   r.previous,
				TailLines:  &tail,
				LimitBytes: &limit,
			}).DoRaw(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			logs[i] = &snapshot.ContainerLog{
				Namespace: r.namespace, Pod: r.pod, Container: r.container, Previous: r.previous,
				Lines: splitLines(raw),
			}
			prog.add("logs", 1)
		}()
	}
	wg.Wait()
	return logs, errs
}

// collectLogs keeps the tails that were read and folds the failures into one visibility entry
// per namespace.
func collectLogs(reqs []logRequest, logs []*snapshot.ContainerLog, errs []error, vis []snapshot.Visibility) ([]snapshot.ContainerLog, []snapshot.Visibility) {
	var out []snapshot.ContainerLog
	failed := map[string][]string{}
	var failedNS []string
	for i, r := range reqs {
		if logs[i] != nil {
			out = append(out, *logs[i])
			continue
		}
		if errs[i] == nil || apierrors.IsBadRequest(errs[i]) || apierrors.IsNotFound(errs[i]) {
			// The container restarted or the copy went away between the list and this request.
			continue
		}
		if _, seen := failed[r.namespace]; !seen {
			failedNS = append(failedNS, r.namespace)
		}
		failed[r.namespace] = append(failed[r.namespace], fmt.Sprintf("%s/%s: %s", r.pod, r.container, reason(errs[i])))
	}
	for _, ns := range failedNS {
		msgs := failed[ns]
		v := snapshot.Visibility{Kind: "pods/log", Namespace: ns}
		if len(msgs) == 1 {
			v.Reason = "could not read the log of " + msgs[0]
		} else {
			v.Reason = fmt.Sprintf("could not read %d container logs, first %s", len(msgs), msgs[0])
		}
		vis = append(vis, v)
	}
	return out, vis
}

func reason(err error) string {
	if apierrors.IsForbidden(err) {
		return forbiddenReason(err)
	}
	return oneLine(err)
}

func splitLines(raw []byte) []string {
	text := strings.TrimRight(string(raw), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// capLogRequests keeps the first maxLogRequests and says how many were left unread.
func capLogRequests(reqs []logRequest, vis []snapshot.Visibility) ([]logRequest, []snapshot.Visibility) {
	if len(reqs) <= maxLogRequests {
		return reqs, vis
	}
	vis = append(vis, snapshot.Visibility{Kind: "pods/log", Reason: fmt.Sprintf(
		"read the log tails of %d failing containers and skipped %d more to stay fast", maxLogRequests, len(reqs)-maxLogRequests)})
	return reqs[:maxLogRequests], vis
}
