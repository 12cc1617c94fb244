package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// AdminUser is the token identity in system:masters that AdminConfig authenticates as.
const AdminUser = "e2e-admin"

// poolSize is how many permissionless token identities the API server knows besides the named
// ones; NewIdentity hands them out. Static tokens cannot be added after the server starts.
const poolSize = 24

// Controllers are the kube-controller-manager controllers that run (canonical names).
var Controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "endpointslice-controller", "garbage-collector-controller",
	"namespace-controller", "serviceaccount-controller", "serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	// Admission counts a namespace's quota usage from the status this controller writes.
	"resourcequota-controller",
	// Binds claims to volumes and reports ProvisioningFailed for a class that does not exist.
	"persistentvolume-binder-controller",
	// Run Jobs (backoffLimit, activeDeadlineSeconds) and schedule CronJobs' Jobs.
	"job-controller", "cronjob-controller",
}

// Options configure Start. The zero value is ready to use.
type Options struct {
	// AssetsDir holds etcd, kube-apiserver, kube-controller-manager and kubectl; default
	// DefaultAssetsDir().
	AssetsDir string
	// Users are extra token identities (no groups, no permissions until bound).
	Users []string
	// Controllers are the kube-controller-manager controllers to run; default Controllers.
	// (The binary's --controllers flag adds to the list when given twice, so the list is an
	// option rather than one of ControllerManagerArgs.)
	Controllers []string
	// StartTimeout bounds the wait for /readyz and the controllers; default 3 minutes, as the
	// first start on a busy 2-core machine is slow.
	StartTimeout time.Duration
	// Logf, when set, receives progress lines (t.Logf or log.Printf).
	Logf func(format string, args ...any)
	// APIServerArgs and ControllerManagerArgs are appended to the binaries' flags (later flags
	// win), e.g. "--v=4" while debugging.
	APIServerArgs, ControllerManagerArgs []string
}

// ControlPlane is a running etcd + kube-apiserver + kube-controller-manager.
type ControlPlane struct {
	dir       string
	assets    string
	host      string
	caPEM     []byte
	tokens    map[string]string // user -> token
	auditPath string
	adminKC   string
	procs     []*process // start order; stopped in reverse

	mu       sync.Mutex
	pool     []string // unused identities for NewIdentity
	apiDown  bool     // kube-apiserver stopped by StopAPIServer
	stopOnce sync.Once
}

// Start runs the control plane and returns once /readyz answers and the controllers work.
// On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	assets := opts.AssetsDir
	if assets == "" {
		if assets, err = DefaultAssetsDir(); err != nil {
			return nil, err
		}
	}
	if err := checkAssets(assets); err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp("", "kubediagnose-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("create control plane dir: %w", err)
	}
	cp := &ControlPlane{dir: dir, assets: assets, tokens: map[string]string{}}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	cp.host = "https://" + net.JoinHostPort("127.0.0.1", itoa(apiPort))
	if err := cp.writeFiles(opts.Users); err != nil {
		return nil, err
	}

	logf("controlplane: starting etcd, kube-apiserver and kube-controller-manager in %s", dir)
	etcdURL := "http://127.0.0.1:" + itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + itoa(etcdPeer)
	if err := cp.start("etcd",
		"--name=e2e",
		"--data-dir="+cp.path("etcd-data"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL,
		"--unsafe-no-fsync=true", // throwaway data; fsync dominates on a shared disk
		"--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := cp.start(apiServer, append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The lease reconciler refuses a loopback address for the kubernetes Service endpoints.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + itoa(apiPort),
		"--tls-cert-file=" + cp.path("apiserver.crt"),
		"--tls-private-key-file=" + cp.path("apiserver.key"),
		"--token-auth-file=" + cp.path("tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.path("sa.key"),
		"--service-account-signing-key-file=" + cp.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--audit-policy-file=" + cp.path("audit-policy.yaml"),
		"--audit-log-path=" + cp.auditPath,
		"--audit-log-mode=blocking",
		// Nodes of the simulated kubelet advertise 127.0.0.1; no CA means the server does not
		// verify the kubelet's serving certificate (pkg/kubelet/client.transportConfig).
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false",
		"--v=1",
	}, opts.APIServerArgs...)...); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := cp.waitReady(ctx); err != nil {
		return nil, err
	}
	controllers := opts.Controllers
	if len(controllers) == 0 {
		controllers = Controllers
	}
	if err := cp.start("kube-controller-manager", append([]string{
		"--kubeconfig=" + cp.adminKC,
		"--controllers=" + strings.Join(controllers, ","),
		// The quota controller counts a namespace's usage from its informers; a count made
		// while they lag behind pods that admission already charged writes too little, and
		// only the next full sync (5 minutes by default) puts it right.
		"--resource-quota-sync-period=10s",
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
		"--service-account-private-key-file=" + cp.path("sa.key"),
		"--root-ca-file=" + cp.path("apiserver.crt"),
		"--v=1",
	}, opts.ControllerManagerArgs...)...); err != nil {
		return nil, err
	}
	if err := cp.waitControllers(ctx); err != nil {
		return nil, err
	}
	logf("controlplane: ready at %s", cp.host)
	return cp, nil
}

func (cp *ControlPlane) path(name string) string { return filepath.Join(cp.dir, name) }

func (cp *ControlPlane) start(name string, args ...string) error {
	p, err := startProcess(name, filepath.Join(cp.assets, name), cp.dir, args)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// writeFiles writes certificates, keys, the token file, the audit policy and the admin kubeconfig.
func (cp *ControlPlane) writeFiles(users []string) error {
	crt, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{"localhost"})
	if err != nil {
		return fmt.Errorf("generate serving certificate: %w", err)
	}
	cp.caPEM = crt // leaf followed by its self-signed CA: a valid trust bundle for clients
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return fmt.Errorf("generate service account key: %w", err)
	}
	var tokens strings.Builder
	add := func(user, groups string) error {
		tok, err := randomToken()
		if err != nil {
			return err
		}
		cp.tokens[user] = tok
		if groups == "" {
			fmt.Fprintf(&tokens, "%s,%s,%s\n", tok, user, user)
		} else {
			fmt.Fprintf(&tokens, "%s,%s,%s,%q\n", tok, user, user, groups)
		}
		return nil
	}
	if err := add(AdminUser, "system:masters"); err != nil {
		return err
	}
	for _, u := range users {
		if _, dup := cp.tokens[u]; dup {
			return fmt.Errorf("duplicate user %q", u)
		}
		if err := add(u, ""); err != nil {
			return err
		}
	}
	for i := 1; i <= poolSize; i++ {
		u := fmt.Sprintf("e2e-user-%d", i)
		if _, dup := cp.tokens[u]; dup {
			continue
		}
		if err := add(u, ""); err != nil {
			return err
		}
		cp.pool = append(cp.pool, u)
	}
	cp.auditPath = cp.path("audit.log")
	files := map[string][]byte{
		"apiserver.crt":     crt,
		"apiserver.key":     key,
		"sa.key":            saKey,
		"tokens.csv":        []byte(tokens.String()),
		"audit-policy.yaml": []byte(auditPolicy),
	}
	for name, data := range files {
		if err := os.WriteFile(cp.path(name), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	cp.adminKC = cp.path("admin.kubeconfig")
	return cp.WriteKubeconfig(cp.adminKC, AdminUser, "default")
}

// auditPolicy records every request at Metadata level: who, verb, resource, namespace, name.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// waitReady polls /readyz until it answers ok, a process dies or ctx ends.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	var last error
	for {
		if err := cp.failed(); err != nil {
			return err
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready at %s: %w (last error: %w); see %s",
				cp.host, ctx.Err(), last, cp.path("kube-apiserver.log"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitControllers waits for the serviceaccount controller to create the default ServiceAccount,
// which shows the controller manager is connected and running.
func (cp *ControlPlane) waitControllers(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	for {
		if err := cp.failed(); err != nil {
			return err
		}
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-controller-manager did not create the default ServiceAccount: %w; see %s",
				ctx.Err(), cp.path("kube-controller-manager.log"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// StopAPIServer stops kube-apiserver and leaves etcd and the controller manager running, as
// when a cluster's API server goes away; StartAPIServer brings it back.
func (cp *ControlPlane) StopAPIServer() {
	cp.mu.Lock()
	i := cp.proc(apiServer)
	if i < 0 || cp.apiDown {
		cp.mu.Unlock()
		return
	}
	// Down from now on, so failed() does not report it ending; the lock is not held through the
	// server's graceful shutdown.
	cp.apiDown = true
	p := cp.procs[i]
	cp.mu.Unlock()
	p.stop(10 * time.Second)
}

// StartAPIServer restarts the kube-apiserver that StopAPIServer stopped, with the same flags,
// port and data, and returns once /readyz answers.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.mu.Lock()
	i := cp.proc(apiServer)
	if i < 0 || !cp.apiDown {
		cp.mu.Unlock()
		return errors.New("kube-apiserver is not stopped")
	}
	old := cp.procs[i]
	p, err := startProcess(old.name, old.cmd.Path, cp.dir, old.cmd.Args[1:])
	if err != nil {
		cp.mu.Unlock()
		return err
	}
	cp.procs[i] = p
	cp.apiDown = false
	cp.mu.Unlock()
	return cp.waitReady(ctx)
}

const apiServer = "kube-apiserver"

// proc is the index of the named process in cp.procs, or -1.
func (cp *ControlPlane) proc(name string) int {
	for i, p := range cp.procs {
		if p.name == name {
			return i
		}
	}
	return -1
}

// failed returns an error for the first process that ended, except an API server stopped on
// purpose.
func (cp *ControlPlane) failed() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.procs {
		if cp.apiDown && p.name == apiServer {
			continue
		}
		if err := p.failure(); err != nil {
			return err
		}
	}
	return nil
}

// Stop kills every process and removes the temporary directory. It is safe to call more than
// once.
func (cp *ControlPlane) Stop() {
	cp.stopOnce.Do(func() {
		cp.mu.Lock()
		procs := append([]*process(nil), cp.procs...)
		cp.mu.Unlock()
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop(10 * time.Second)
		}
		_ = os.RemoveAll(cp.dir)
	})
}

// Err reports a control-plane process that has ended; nil while all run.
func (cp *ControlPlane) Err() error { return cp.failed() }

// Host is the API server URL (https://127.0.0.1:port).
func (cp *ControlPlane) Host() string { return cp.host }

// CAData is the PEM bundle that verifies the API server's certificate.
func (cp *ControlPlane) CAData() []byte { return append([]byte(nil), cp.caPEM...) }

// AssetsDir is the directory the binaries were run from; kubectl lives there too.
func (cp *ControlPlane) AssetsDir() string { return cp.assets }

// Kubectl is the path of the kubectl binary built with the assets.
func (cp *ControlPlane) Kubectl() string { return filepath.Join(cp.assets, "kubectl") }

// Dir is the temporary directory holding data, logs (<binary>.log) and kubeconfigs.
func (cp *ControlPlane) Dir() string { return cp.dir }

// AuditLogPath is the API server's audit log: one JSON audit.k8s.io/v1 Event per line, Metadata
// level, stage ResponseComplete (or Panic).
func (cp *ControlPlane) AuditLogPath() string { return cp.auditPath }

// AdminKubeconfig is the path of a kubeconfig for the admin (system:masters), namespace default.
func (cp *ControlPlane) AdminKubeconfig() string { return cp.adminKC }

// AdminConfig returns a fresh rest.Config for the admin identity.
func (cp *ControlPlane) AdminConfig() *rest.Config {
	cfg, _ := cp.ConfigFor(AdminUser)
	return cfg
}

// ConfigFor returns a fresh rest.Config authenticating as a token identity.
func (cp *ControlPlane) ConfigFor(user string) (*rest.Config, error) {
	tok, ok := cp.tokens[user]
	if !ok {
		return nil, fmt.Errorf("no token identity %q", user)
	}
	return &rest.Config{
		Host:            cp.host,
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAData()},
		QPS:             200,
		Burst:           400,
		UserAgent:       "kubediagnose-e2e",
	}, nil
}

// WriteKubeconfig writes a kubeconfig (mode 0600) for a token identity with namespace as the
// context's default.
func (cp *ControlPlane) WriteKubeconfig(path, user, namespace string) error {
	tok, ok := cp.tokens[user]
	if !ok {
		return fmt.Errorf("no token identity %q", user)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.host, CertificateAuthorityData: cp.CAData()}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tok}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user, Namespace: namespace}
	kc.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

// CreateNamespace creates a namespace with a generated name (prefix + random suffix) and waits
// for its default ServiceAccount, without which pods are rejected.
func (cp *ControlPlane) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return "", fmt.Errorf("admin client: %w", err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return ns.Name, nil
		}
		if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("wait for default service account in %s: %w", ns.Name, err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for default service account in %s: %w", ns.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DeleteNamespace asks for a namespace's deletion without waiting; pods bound to simulated nodes
// go away only while a kubeletsim runs.
func (cp *ControlPlane) DeleteNamespace(ctx context.Context, name string) error {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	err = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

var errPoolEmpty = errors.New("no unused token identity left; raise poolSize in internal/controlplane")

func (cp *ControlPlane) takeUser() (string, error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if len(cp.pool) == 0 {
		return "", errPoolEmpty
	}
	u := cp.pool[0]
	cp.pool = cp.pool[1:]
	return u, nil
}
