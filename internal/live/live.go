package live

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// DefaultRequestTimeout bounds each request when --request-timeout is unset or zero, so an
// unreachable server gives an answer instead of a hang.
const DefaultRequestTimeout = 10 * time.Second

// Default log bounds per container.
const (
	DefaultLogTailLines  int64 = 50
	DefaultLogLimitBytes int64 = 16 << 10
)

// Options says what to read.
type Options struct {
	// Namespaces to read; empty means the kubeconfig context's namespace.
	Namespaces []string
	// AllNamespaces reads every namespace and ignores Namespaces.
	AllNamespaces bool
	// LogTailLines and LogLimitBytes bound each container's log tail; zero means the default.
	LogTailLines  int64
	LogLimitBytes int64
	// Selector (-l, --field-selector) is sent to the API server with every list and watch of
	// the kinds it selects (kind.selectable).
	Selector snapshot.Selector
	// AfterFirstRead, when set, is called once a watch's informers have taken over from its
	// first read: the read's answers, the objects decoded and dropped and the reader's first
	// diagnosis are garbage then, and the process's memory policy settles (internal/memory).
	AfterFirstRead func()
}

// Source reads snapshots from a live cluster. It implements snapshot.Source.
type Source struct {
	client kubernetes.Interface
	// watchClient returns the client that opens watches: it has no overall request timeout,
	// which would cut every watch after --request-timeout; the reflector bounds each watch by
	// its own timeoutSeconds. It is built on first use: a one-off read never watches.
	watchClient func() (kubernetes.Interface, error)
	namespaces  []string // empty: all namespaces
	opts        Options
	info        snapshot.SourceInfo
	timeout     time.Duration
	now         func() time.Time
	// retry paces Watch's first read while the server is unreachable; zero means retryInterval.
	retry time.Duration
	// throttle counts the server's requests to retry later; nil for a fake client.
	throttle *throttle
	// shared, when set, shares the lists of cluster-scoped kinds with the other sources of a
	// fleet's read that have the same conn key (server and identity); keyed says conn is one.
	shared *clusterLists
	conn   connKey
	keyed  bool
	// creds, when the kubeconfig user's credentials come from a plugin, says whether it gave
	// none: net/http words a request that timed out in it as a timeout of the server's.
	creds *credentialGate
}

var _ snapshot.Source = (*Source)(nil)

// New builds a source from the kubeconfig flags. It does not contact the server; a bad
// kubeconfig is reported here, an unreachable server by the first Snapshot.
func New(flags *genericclioptions.ConfigFlags, opts Options) (*Source, error) {
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	current := raw.CurrentContext
	if set(flags.Context) {
		current = *flags.Context
	}
	// Without these checks client-go falls back to http://localhost:8080, and the user reads
	// "connection refused" for what is a missing kubeconfig.
	if !set(flags.APIServer) && !set(flags.ClusterName) && !inCluster() {
		switch {
		case len(raw.Clusters) == 0:
			return nil, noKubeconfig(loader.ConfigAccess())
		case current == "":
			return nil, errors.New("no current context; run kubectl config use-context or pass --context")
		}
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	ns := ""
	if !opts.AllNamespaces && len(dedupe(opts.Namespaces)) == 0 {
		if ns, _, err = loader.Namespace(); err != nil {
			return nil, kubeconfigError(err)
		}
	}
	return newSource(cfg, current, ns, opts, NewConnections(), nil)
}

// newSource builds a source over a REST config; ns is the context's namespace, read when
// opts name none. Its requests go through conns; shared, when set, shares its cluster-scoped
// lists with the other sources built with it.
func newSource(cfg *rest.Config, context, ns string, opts Options, conns *Connections, shared *clusterLists) (*Source, error) {
	src := &Source{opts: opts, now: time.Now}
	src.info = snapshot.SourceInfo{Type: snapshot.SourceLive, Server: cfg.Host, Context: context}
	if !opts.AllNamespaces {
		src.namespaces = dedupe(opts.Namespaces)
		if len(src.namespaces) == 0 {
			src.namespaces = []string{ns}
		}
	}
	cfg = tune(cfg)
	src.timeout = cfg.Timeout
	// A config whose transport cannot be compared with another's (a credential plugin, a
	// dialer) may be another identity each time: it lists on its own.
	if src.conn, src.keyed = keyOf(cfg); src.keyed {
		src.shared = shared
	}
	src.throttle = &throttle{}
	var err error
	if src.client, src.watchClient, src.creds, err = conns.clients(cfg, src.throttle.wrap); err != nil {
		return nil, fmt.Errorf("build client for %s: %w", cfg.Host, err)
	}
	return src, nil
}

// tune returns a copy of cfg set up for a fast read of many kinds at once.
func tune(in *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(in)
	// Protobuf is several times cheaper to decode than JSON for lists of pods and events; the
	// server answers JSON for the few resources it cannot encode as protobuf.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultRequestTimeout
	}
	// No token bucket on the client's side unless the caller set one. What a read sends is
	// bounded by what it has in flight (listParallelism lists, parallelism log tails, maxStreams
	// per server), and the server's API Priority and Fairness queues or refuses (429, which
	// client-go retries and throttle counts) what it cannot take. A bucket of 50 a second on
	// top made the read wait on itself: the 200 log tails of a 20,000-pod namespace came 2 s
	// after its lists, half of the audit's time, where unthrottled they take under 0.2 s. SIG
	// API Machinery's advice for servers with APF (GA since 1.29), which controller-runtime
	// follows by default (kubernetes-sigs/controller-runtime#3119).
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-diagnose"
	}
	return cfg
}

// Namespaces returns the namespaces the source reads; empty means all.
func (s *Source) Namespaces() []string { return append([]string(nil), s.namespaces...) }

// NamespaceNames lists the names of the cluster's namespaces, sorted, for the console's namespace
// prompt. An identity without list on namespaces gets the API server's Forbidden error.
func (s *Source) NamespaceNames(ctx context.Context) ([]string, error) {
	// resourceVersion=0 lets the server answer from its watch cache: suggestions need no
	// consistent read.
	list, err := s.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, s.fatal(err)
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		names = append(names, list.Items[i].Name)
	}
	sort.Strings(names)
	return names, nil
}

// Info describes the source as reports show it.
func (s *Source) Info() snapshot.SourceInfo { return s.info }

// noKubeconfig names the files that were tried and held no cluster, so a mistyped KUBECONFIG
// shows as such.
func noKubeconfig(access clientcmd.ConfigAccess) error {
	paths := access.GetLoadingPrecedence()
	if access.IsExplicitFile() {
		paths = []string{access.GetExplicitFile()}
	}
	var missing, present []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		} else {
			present = append(present, p)
		}
	}
	from := ""
	if !access.IsExplicitFile() && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		from = " (from KUBECONFIG)"
	}
	switch {
	case len(present) > 0:
		return fmt.Errorf("no cluster in kubeconfig %s%s; set KUBECONFIG or pass --kubeconfig", strings.Join(present, ", "), from)
	case len(missing) > 0:
		return fmt.Errorf("no kubeconfig found at %s%s; set KUBECONFIG or pass --kubeconfig", strings.Join(missing, ", "), from)
	}
	return errors.New("no kubeconfig found; set KUBECONFIG or pass --kubeconfig")
}

func kubeconfigError(err error) error {
	if clientcmd.IsEmptyConfig(err) {
		return errors.New("no kubeconfig found; set KUBECONFIG or pass --kubeconfig")
	}
	return fmt.Errorf("load kubeconfig: %s", oneLine(err))
}

// host is the server's host:port, as messages name it.
func (s *Source) host() string {
	if u, err := url.Parse(s.info.Server); err == nil && u.Host != "" {
		return u.Host
	}
	return s.info.Server
}

// unreachable turns a transport failure into one line naming the server.
func (s *Source) unreachable(err error) error {
	server := s.host()
	if server == "" {
		return fmt.Errorf("cannot reach the API server: %w", err)
	}
	return fmt.Errorf("cannot reach the API server at %s: %w", server, err)
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func set(p *string) bool { return p != nil && *p != "" }

// inCluster reports whether a service account's credentials are mounted, which client-go uses
// when there is no kubeconfig.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}
