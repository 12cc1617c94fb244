package live

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// parallelism bounds the requests in flight: enough to hide latency, few enough not to load a
// small API server.
const parallelism = 6

// job is one kind in one namespace ("" for cluster-scoped kinds or all namespaces).
type job struct {
	kind      *kind
	namespace string
	objs      []runtime.Object
	vis       *snapshot.Visibility
}

// Snapshot lists every kind the tool reads in parallel, then fetches the log tails of failing
// copies. A forbidden or unserved kind becomes a Visibility entry; an unreachable server or
// rejected credentials end the read with one error.
func (s *Source) Snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	return s.SnapshotWithProgress(ctx, nil)
}

// SnapshotWithProgress reads as Snapshot does and reports, as each page of a list arrives, the
// kind's plural resource name and how many of it have been read so far across namespaces
// ("pods", 12400); while the log tails are fetched it reports "logs". The console shows this under
// its spinner. progress is called from one goroutine at a time, never after this returns, and
// must not block; nil reports nothing.
func (s *Source) SnapshotWithProgress(ctx context.Context, progress func(what string, n int)) (*snapshot.Snapshot, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := newProgress(progress)
	defer prog.stop()

	jobs := s.jobs()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, parallelism)
	)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			err := s.listKind(ctx, j, prog)
			if err == nil {
				return
			}
			if v, ok := s.visibility(j.kind, j.namespace, err); ok {
				j.vis = &v
				return
			}
			mu.Lock()
			if firstErr == nil {
				firstErr = err
				cancel()
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, s.fatal(firstErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	snap := &snapshot.Snapshot{Namespaces: s.Namespaces(), Source: s.info}
	for _, j := range jobs {
		if j.vis != nil {
			snap.Visibility = append(snap.Visibility, *j.vis)
			continue
		}
		j.kind.add(snap, j.objs)
	}
	snap.Logs, snap.Visibility = s.readLogs(ctx, snap.Pods, snap.Visibility, prog)
	// Read last, so that no object read above is younger than the reference time.
	snap.ReferenceTime = s.now().UTC()
	return snap, nil
}

func (s *Source) jobs() []*job {
	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var jobs []*job
	for i := range kinds {
		k := &kinds[i]
		if k.Cluster {
			jobs = append(jobs, &job{kind: k})
			continue
		}
		for _, ns := range namespaces {
			jobs = append(jobs, &job{kind: k, namespace: ns})
		}
	}
	return jobs
}

// listKind reads one kind page by page, stripping managedFields as objects arrive: they are
// often half of an object's size and the engine never reads them. Each page is counted to prog
// as it arrives.
func (s *Source) listKind(ctx context.Context, j *job, prog *progress) error {
	list, what := j.kind.list(s.client, j.namespace), j.kind.plural()
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		page, err := list(ctx, opts)
		if err == nil {
			prog.add(what, meta.LenList(page))
		}
		return page, err
	})
	// resourceVersion=0 lets the API server answer from its watch cache instead of a quorum
	// read of etcd; a diagnosis does not need a consistent cut across kinds.
	opts := j.kind.listOptions(s.opts.Selector, metav1.ListOptions{ResourceVersion: "0"})
	return p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		stripManagedFields(obj)
		j.objs = append(j.objs, obj)
		return nil
	})
}

func stripManagedFields(obj any) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
}

// visibility classifies an error the API server answered with; ok is false for anything that
// means the read as a whole failed.
func (s *Source) visibility(k *kind, namespace string, err error) (snapshot.Visibility, bool) {
	v := snapshot.Visibility{Kind: k.Kind, Namespace: namespace}
	switch {
	case apierrors.IsForbidden(err):
		v.Reason = "forbidden: " + forbiddenDetail(err)
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
		v.Reason = fmt.Sprintf("not served by this API server (%s)", k.Resource)
	default:
		return v, false
	}
	return v, true
}

// forbiddenDetail drops the "<resource> is forbidden: " prefix the API server puts in front of
// the reason, which the Visibility entry already says.
func forbiddenDetail(err error) string {
	msg := oneLine(err)
	if i := strings.Index(msg, " is forbidden: "); i >= 0 {
		return msg[i+len(" is forbidden: "):]
	}
	return msg
}

// fatal turns the error that stopped a read into one line that says what to do.
func (s *Source) fatal(err error) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server rejected the credentials of context %q; check the kubeconfig user: %w", s.info.Context, err)
	case errors.As(err, &status):
		return fmt.Errorf("read from %s: %w", s.info.Server, err)
	case errors.Is(err, context.Canceled):
		return err
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// "Get https://host/apis/...?limit=500&resourceVersion=0: dial tcp ..." repeats the host
		// and a URL the user never typed; the transport error alone says it.
		err = uerr.Err
	}
	return s.unreachable(err)
}
