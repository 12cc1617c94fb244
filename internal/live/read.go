package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/net/http2"
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

// listParallelism bounds the lists of one read in flight: every kind of a namespace at once, so
// a read behind a long round trip waits for one round trip of lists, not two. The contexts of a
// fleet that share a server may so send more requests at once than an HTTP/2 connection
// carries; the transport's stream gate (maxStreams) holds them to one connection.
var listParallelism = len(kinds)

// job is one kind in one namespace ("" for cluster-scoped kinds or all namespaces).
type job struct {
	kind      *kind
	namespace string
	objs      []runtime.Object
	vis       *snapshot.Visibility
	// err is what the API server answered when vis is set; transient says it may answer
	// otherwise next time (a 5xx, a timeout), so a watch lists the kind again.
	err       error
	transient bool
	// rv is the resourceVersion the list was read at, and listType its list's type: a watch
	// started from this read answers its informer's first list with them.
	rv       string
	listType reflect.Type
	// trim is done to each object as it arrives; nil strips managedFields alone.
	trim func(obj any)
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
	snap, _, err := s.read(ctx, progress, nil, nil)
	return snap, err
}

// read is Snapshot that also returns its lists, for a watch to start its informers from, and
// hands rows, when set, a snapshot of the row kinds alone (kind.rows) as soon as they are listed:
// a console can show the workloads while pods, events and logs are still being read. rows is
// called at most once, from one of the read's goroutines, before read returns; it must not block.
// trim, when set, is done to every object in place of stripping its managedFields, in the
// goroutine that lists its kind: it may be called from several at once.
func (s *Source) read(ctx context.Context, progress func(what string, n int), rows func(*snapshot.Snapshot), trim func(obj any)) (*snapshot.Snapshot, []*job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	prog := newProgress(progress)
	defer prog.stop()

	jobs := s.jobs()
	for _, j := range jobs {
		j.trim = trim
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, listParallelism)
		rowsLeft int
	)
	for _, j := range jobs {
		if j.kind.rows {
			rowsLeft++
		}
	}
	// rowKindDone hands the row kinds to rows once the last of them is read.
	rowKindDone := func() {
		mu.Lock()
		rowsLeft--
		last := rowsLeft == 0 && firstErr == nil
		mu.Unlock()
		if !last || rows == nil {
			return
		}
		early := &snapshot.Snapshot{Namespaces: s.Namespaces(), Source: s.info, ReferenceTime: s.now().UTC()}
		for _, j := range jobs {
			if j.kind.rows && j.vis == nil {
				j.kind.add(early, j.objs)
			}
		}
		rows(early.FilterWorkloads(s.opts.Selector))
	}
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
			var err error
			if j.kind.Cluster && s.shared != nil {
				err = s.listShared(ctx, j, prog)
			} else {
				err = s.listKind(ctx, j, prog)
			}
			if err == nil {
				if j.kind.rows {
					rowKindDone()
				}
				return
			}
			if v, transient, ok := s.visibility(j.kind, j.namespace, err); ok {
				j.vis, j.err, j.transient = &v, err, transient
				if j.kind.rows {
					rowKindDone()
				}
				return
			}
			mu.Lock()
			if firstErr == nil {
				firstErr = &listError{what: j.kind.plural(), namespace: j.namespace, err: err}
				cancel()
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, nil, s.fatal(firstErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := s.noWorkloads(jobs); err != nil {
		return nil, nil, err
	}

	snap := &snapshot.Snapshot{Namespaces: s.Namespaces(), Source: s.info}
	for _, j := range jobs {
		if j.vis != nil {
			snap.Visibility = append(snap.Visibility, *j.vis)
			continue
		}
		j.kind.add(snap, j.objs)
	}
	// The server filtered the selectable kinds; ReplicaSets, listed whole, stay with their
	// selected Deployments only, before any log is read for them.
	snap = snap.FilterWorkloads(s.opts.Selector)
	snap.Logs, snap.Visibility = s.readLogs(ctx, snap.Pods, snap.ReplicaSets, snap.Visibility, prog)
	// Read last, so that no object read above is younger than the reference time.
	snap.ReferenceTime = s.now().UTC()
	return snap, jobs, nil
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
		if err != nil {
			return page, err
		}
		// Every list an API server answers carries the resourceVersion it was read at; a
		// server that answers anything else with 200 ("{}", a health check's JSON) is not one,
		// and its empty list must not read as an empty namespace.
		lm, lerr := meta.ListAccessor(page)
		if lerr != nil || lm.GetResourceVersion() == "" {
			return page, fmt.Errorf("%w: it answered the list of %s with no resourceVersion", errNotAPIServer, what)
		}
		if opts.Continue == "" {
			// The first page's version is the whole list's: later pages are read at it.
			j.rv, j.listType = lm.GetResourceVersion(), reflect.TypeOf(page)
		}
		prog.add(what, meta.LenList(page))
		return page, nil
	})
	// resourceVersion=0 lets the API server answer from its watch cache instead of a quorum
	// read of etcd; a diagnosis does not need a consistent cut across kinds.
	opts := j.kind.listOptions(s.opts.Selector, metav1.ListOptions{ResourceVersion: "0"})
	trim := j.trim
	if trim == nil {
		trim = stripManagedFields
	}
	return p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		trim(obj)
		j.objs = append(j.objs, obj)
		return nil
	})
}

// listShared lists a cluster-scoped kind through the fleet's shared lists: the first source of
// its server and identity lists it, the others take the answer. The progress line counts the
// objects once the answer is in.
func (s *Source) listShared(ctx context.Context, j *job, prog *progress) error {
	opts := j.kind.listOptions(s.opts.Selector, metav1.ListOptions{})
	key := listKey{conn: s.conn, kind: j.kind.Kind, labelSel: opts.LabelSelector, fieldSelect: opts.FieldSelector}
	res, err := s.shared.list(ctx, key, func(ctx context.Context) listed {
		own := &job{kind: j.kind, namespace: j.namespace}
		err := s.listKind(ctx, own, nil)
		return listed{objs: own.objs, rv: own.rv, listType: own.listType, err: err}
	})
	if err != nil {
		return err
	}
	j.objs, j.rv, j.listType = res.objs, res.rv, res.listType
	prog.add(j.kind.plural(), len(res.objs))
	return res.err
}

func stripManagedFields(obj any) { snapshot.TrimManagedFields(obj) }

// visibility classifies an error the API server answered with; ok is false for anything that
// means the read as a whole failed. A 404 on pods is never a kind the server does not serve:
// every Kubernetes API server serves v1 pods, so the server is something else. A server error
// (5xx, or 429 past client-go's retries) or a timeout on a kind that only adds to the picture
// (events, slices, quotas, claims: neither a workload nor its pods) is transient: the read goes
// on without it, as without a forbidden kind, and a watch lists it again.
func (s *Source) visibility(k *kind, namespace string, err error) (v snapshot.Visibility, transient, ok bool) {
	v = snapshot.Visibility{Kind: k.Kind, Namespace: namespace}
	var cred *CredentialError
	switch {
	case apierrors.IsForbidden(err):
		v.Reason = forbiddenReason(err)
	case (apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err)) && k.Kind != "Pod":
		v.Reason = fmt.Sprintf("not served by this API server (%s)", k.Resource)
	case k.Workload || k.Kind == "Pod" || errors.As(err, &cred) || errors.Is(err, context.Canceled) || s.creds != nil && s.creds.Failed() != nil:
		return v, false, false
	case serverFailed(err):
		v.Reason = fmt.Sprintf("the API server failed to list %s: %s", k.plural(), fromServer{err})
		transient = true
	case timedOut(err):
		v.Reason = fmt.Sprintf("the API server did not answer the list of %s within %s", k.plural(), s.timeout)
		transient = true
	default:
		return v, false, false
	}
	return v, transient, true
}

// serverFailed reports whether the API server (or a proxy before it) answered with a server
// error, or went on throttling past client-go's retries.
func serverFailed(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 500 || code == 429
}

func timedOut(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr) && nerr.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

// listError is the error of the list that ended a read: the resource and the namespace.
type listError struct {
	what, namespace string
	err             error
}

func (e *listError) Error() string { return e.where() + ": " + e.err.Error() }

// where is "list pods in namespace telemetry" ("list nodes" for a kind of the cluster).
func (e *listError) where() string {
	if e.namespace == "" {
		return "list " + e.what
	}
	return fmt.Sprintf("list %s in namespace %s", e.what, e.namespace)
}

func (e *listError) Unwrap() error { return e.err }

// noWorkloads fails a read in which no workload kind could be listed: the report would say
// "No workloads found" about a namespace the tool could not see, and pass --fail-on.
func (s *Source) noWorkloads(jobs []*job) error {
	var first *job
	for _, j := range jobs {
		if !j.kind.Workload {
			continue
		}
		if j.vis == nil {
			return nil
		}
		if first == nil {
			first = j
		}
	}
	if first == nil {
		return nil
	}
	where := "in any namespace"
	if first.namespace != "" {
		where = "in namespace " + first.namespace
	}
	hint := ""
	if apierrors.IsForbidden(first.err) {
		hint = "; check the kubeconfig user's permissions with: kubectl auth can-i list " + first.kind.qualified()
		if first.namespace != "" {
			hint += " -n " + first.namespace
		} else {
			hint += " -A"
		}
	}
	return fmt.Errorf("cannot list any workload %s: %w%s", where, fromServer{first.err}, hint)
}

// fromServer words an API server's answer as kubectl does: "Error from server (Forbidden):
// deployments.apps is forbidden: ...".
type fromServer struct{ err error }

func (f fromServer) Unwrap() error { return f.err }

func (f fromServer) Error() string {
	var status apierrors.APIStatus
	if errors.As(f.err, &status) {
		if r := status.Status().Reason; r != "" {
			return fmt.Sprintf("Error from server (%s): %s", r, oneLine(f.err))
		}
		return "Error from server: " + oneLine(f.err)
	}
	return oneLine(f.err)
}

// forbiddenReason is the Visibility reason of a refused list: "forbidden: User "x" cannot list
// resource ...". The "<resource> is forbidden: " the API server puts in front repeats the kind
// the entry already names, and a proxy's bare "Forbidden" must not read "forbidden: Forbidden".
func forbiddenReason(err error) string {
	msg := oneLine(err)
	if i := strings.Index(msg, " is forbidden: "); i >= 0 {
		msg = msg[i+len(" is forbidden: "):]
	}
	const word = "forbidden"
	if len(msg) >= len(word) && strings.EqualFold(msg[:len(word)], word) {
		msg = strings.TrimLeft(msg[len(word):], ": ")
	}
	if msg == "" {
		return word
	}
	if strings.HasPrefix(msg, "(") {
		return word + " " + msg
	}
	return word + ": " + msg
}

// errNotAPIServer marks an answer no Kubernetes API server gives.
var errNotAPIServer = errors.New("not a Kubernetes API server")

// fatal turns the error that stopped a read into one line that says what to do.
func (s *Source) fatal(err error) error {
	// The list that failed is named where the answer is the server's about it; an unreachable
	// server, or one that is not an API server, is said of the server whatever was listed.
	list := ""
	if le := (*listError)(nil); errors.As(err, &le) {
		list, err = le.where(), le.err
	}
	var status apierrors.APIStatus
	var cred *CredentialError
	if errors.As(err, &cred) || s.creds != nil && !errors.Is(err, context.Canceled) {
		if cred == nil {
			// net/http keeps only the words of a request that timed out in the plugin.
			cred = s.creds.Failed()
		}
		if cred != nil {
			// The server was never asked: the error is the plugin's, not the server's.
			return cred
		}
	}
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server rejected the credentials of context %q; check the kubeconfig user: %w", s.info.Context, err)
	case apierrors.IsNotFound(err):
		// Only a list every API server serves ends here (see visibility): a web server, a proxy
		// or a wrong port answered, not Kubernetes.
		return fmt.Errorf("the server at %s is %w: %w", s.host(), errNotAPIServer, fromServer{err})
	case errors.As(err, &status) && list != "":
		return fmt.Errorf("read from %s: %s: %w", s.info.Server, list, err)
	case errors.As(err, &status):
		return fmt.Errorf("read from %s: %w", s.info.Server, err)
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, errNotAPIServer):
		return fmt.Errorf("the server at %s is %w", s.host(), err)
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		if readingBody(err) {
			return fmt.Errorf("the API server at %s began to answer, but its answer did not end within %s; raise --request-timeout if it is slow", s.host(), s.timeout)
		}
		return fmt.Errorf("cannot reach the API server at %s: no answer within %s; raise --request-timeout if it is slow", s.host(), s.timeout)
	}
	// kube-apiserver resets the stream (or closes the connection) of a request that outlives its
	// own --request-timeout, a minute by default: a large list cut off mid-answer. client-go's
	// wrapping ("Please retry. Original error: ...") adds nothing to the cause.
	var cut error
	if serr := (http2.StreamError{}); errors.As(err, &serr) {
		cut = serr
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		cut = io.ErrUnexpectedEOF
	}
	if cut != nil {
		return fmt.Errorf("the API server at %s cut off its answer to a list (%w): it went away mid-answer, or the list outlived the server's own request timeout (kube-apiserver --request-timeout, 1 minute by default), which --request-timeout here cannot raise; retry when the server is less busy, or read less at once (-n, -l)", s.host(), cut)
	}
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		// Not a transport error: the server answered, with something client-go could not
		// decode as a list ("serializer for text/html doesn't exist").
		return fmt.Errorf("the server at %s is %w: %w", s.host(), errNotAPIServer, fromServer{err})
	}
	// "Get https://host/apis/...?limit=500&resourceVersion=0: dial tcp ..." repeats the host
	// and a URL the user never typed; the transport error alone says it.
	return s.unreachable(uerr.Err)
}

// readingBody reports whether err came while an answer's body was read: the server answered,
// and the timeout cut the answer short. The words are client-go's (rest.Request's
// transformResponse) and net/http's (an http.Client's Timeout while the body is read).
func readingBody(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "error when reading response body") || strings.Contains(msg, "while reading body")
}
