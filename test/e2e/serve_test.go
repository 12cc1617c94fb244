package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/test/testbed/promtest"
)

// TestServeScrapedByPrometheus installs the shipped RBAC, runs `serve` as its ServiceAccount
// beside a healthy Deployment and one whose rollout left it at full count with nothing
// serving, and has a real
// Prometheus scrape it with deploy/alerts.yaml loaded, FullCountZeroServing's `for: 5m`
// rendered as `for: 10s`. Through Prometheus's API: the series carry the right values, the
// alert fires for the broken workload only, and once it is fixed the series and the alert
// follow. SIGTERM then stops serve with 143.
func TestServeScrapedByPrometheus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	e.create(t, ingester("healthy", 2, reachableIntake), true)
	// The incident the alert is for: a Recreate rollout replaces every copy with one that
	// runs and is never Ready, and the count is met.
	broken := quickProbe(ingester("broken", 2, reachableIntake))
	broken.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	// The engine presumes that a revision with no copy left served when it ran a progress
	// deadline before the next replaced it: a short deadline lets revision 1 earn that soon.
	const deadline = 12 * time.Second
	broken.Spec.ProgressDeadlineSeconds = ptr.To(int32(deadline / time.Second))
	created := time.Now()
	e.create(t, broken, true)
	kubeconfig := installServe(t, e)
	// Started only once both serve: a workload whose copies are still starting is at full
	// count with nothing serving too, for as long as they take.
	e.waitServing(t, "healthy", 2)
	e.waitServing(t, "broken", 2)
	time.Sleep(time.Until(created.Add(deadline + time.Second)))
	e.update(t, "broken", func(c *corev1.Container) { c.Env[0].Value = unreachableIntake })
	e.waitPods(t, "broken", 2, "running, not Ready, on the new endpoint", func(p corev1.Pod) bool {
		return runningNotReady(p) && p.Spec.Containers[0].Env[0].Value == unreachableIntake
	})

	addr := freeAddr(t)
	srv := startServe(t, "serve", "--kubeconfig", kubeconfig, "-n", e.ns, "--listen", addr, "--refresh", "2s", "--report")
	prom := promtest.Start(t, promtest.Config{Targets: []string{addr}, RuleFiles: []string{renderAlerts(t)}})
	base := "http://" + addr
	eventually(t, 30*time.Second, func() string {
		code, body := httpGet(base + "/readyz")
		if code != http.StatusOK {
			return fmt.Sprintf("/readyz %d %q; serve's log:\n%s", code, body, srv.log())
		}
		return ""
	})

	sel := fmt.Sprintf(`{namespace=%q}`, e.ns)
	eventually(t, 60*time.Second, func() string {
		return promSays(prom.URL, map[string]string{
			`kubectl_diagnose_workload_declared_copies` + sel: "broken=2 healthy=2",
			`kubectl_diagnose_workload_existing_copies` + sel: "broken=2 healthy=2",
			`kubectl_diagnose_workload_serving_copies` + sel:  "broken=0 healthy=2",
			`kubectl_diagnose_workload_shape` + sel:           "broken/live-but-idle=1 healthy/healthy=1",
			`kubectl_diagnose_workload_info` + sel:            "broken/spec/named-in-failure=1 healthy/unknown/=1",
		})
	})
	ages, err := promQuery(prom.URL, `kubectl_diagnose_workload_youngest_copy_age_seconds`+sel)
	if err != nil || len(ages) != 2 {
		t.Fatalf("youngest copy ages %v: %v", ages, err)
	}
	for _, a := range ages {
		if a.value < 1 || a.value > 600 {
			t.Errorf("youngest copy age of %s = %v s, want the seconds since its copies started", a.labels["name"], a.value)
		}
	}

	eventually(t, 60*time.Second, func() string {
		as, err := promAlerts(prom.URL)
		if err != nil {
			return err.Error()
		}
		for _, a := range as {
			if a.Labels["namespace"] == e.ns && a.Labels["name"] == "broken" && a.State == "firing" {
				return ""
			}
		}
		return fmt.Sprintf("FullCountZeroServing not firing for broken: alerts %+v", as)
	})
	if hist, err := promQuery(prom.URL, fmt.Sprintf(`ALERTS{alertname="FullCountZeroServing",namespace=%q,name!="broken"}[10m]`, e.ns)); err != nil || len(hist) != 0 {
		t.Errorf("FullCountZeroServing was active for others than broken: %v %v", hist, err)
	}

	// /report is the audit JSON, in the documented schema, of what /metrics shows, to a caller
	// whose token may list pods and get their logs: serve's own ServiceAccount may.
	code, body := httpGetAs(base+"/report", bearerOf(t, kubeconfig))
	if code != http.StatusOK {
		t.Fatalf("/report: %d %s", code, body)
	}
	r, err := decodeReport(body)
	if err != nil {
		t.Fatal(err)
	}
	if d := (verdict{name: "broken", shape: "live-but-idle", cause: "spec", suspect: "spec.template.spec.containers[0].env[0].value"}).check(r); d != "" {
		t.Error(d)
	}
	if len(r.Visibility) != 0 {
		t.Errorf("serve as the shipped ServiceAccount could not read %+v; the ClusterRole grants too little", r.Visibility)
	}

	// Fixed: the series follow, the live-but-idle one is gone, and the alert resolves.
	e.update(t, "broken", func(c *corev1.Container) { c.Env[0].Value = reachableIntake })
	e.waitServing(t, "broken", 2)
	eventually(t, 60*time.Second, func() string {
		if msg := promSays(prom.URL, map[string]string{
			`kubectl_diagnose_workload_serving_copies` + sel: "broken=2 healthy=2",
			`kubectl_diagnose_workload_shape` + sel:          "broken/healthy=1 healthy/healthy=1",
		}); msg != "" {
			return msg
		}
		as, err := promAlerts(prom.URL)
		if err != nil {
			return err.Error()
		}
		for _, a := range as {
			if a.Labels["namespace"] == e.ns {
				return fmt.Sprintf("alert still active after the fix: %+v", a)
			}
		}
		return ""
	})

	if code, err := srv.signal(syscall.SIGTERM); code != 143 || !strings.Contains(srv.log(), "error: interrupted by SIGTERM") {
		t.Errorf("serve after SIGTERM: exit %d (%v), want 143 and one line saying so; log:\n%s", code, err, srv.log())
	}
	if n := strings.Count(srv.log(), "first read: "); n != 1 {
		t.Errorf("serve's log has %d first reads:\n%s", n, srv.log())
	}
}

// installServe creates deploy/kubectl-diagnose.yaml's Namespace, ServiceAccount, ClusterRole,
// ClusterRoleBindings and NetworkPolicy, once for the package's run (their names are fixed,
// and the control plane is thrown away after it), and sends its Deployment, Service and the
// pod its Deployment would create as server-side dry runs (the namespace enforces the
// restricted Pod Security level on that pod). It returns a kubeconfig of a new token of the
// ServiceAccount, in e's namespace.
func installServe(t *testing.T, e *env) string {
	t.Helper()
	installed.Do(func() { installed.sa, installed.err = installManifests() })
	if installed.err != nil {
		t.Fatal(installed.err)
	}
	sa := installed.sa
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	tok, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(context.Background(), sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cp.Host(), CertificateAuthorityData: cp.CAData()}
	kc.AuthInfos["serve"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["serve"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "serve", Namespace: e.ns}
	kc.CurrentContext = "serve"
	path := filepath.Join(t.TempDir(), "serve.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// installed is deploy/kubectl-diagnose.yaml as installServe installed it.
var installed struct {
	sync.Once
	sa  *corev1.ServiceAccount
	err error
}

// shippedManifests decodes deploy/kubectl-diagnose.yaml strictly.
func shippedManifests() ([]runtime.Object, error) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubectl-diagnose.yaml"))
	if err != nil {
		return nil, err
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", doc, err)
		}
		out = append(out, obj)
	}
}

func installManifests() (*corev1.ServiceAccount, error) {
	objs, err := shippedManifests()
	if err != nil {
		return nil, err
	}
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var sa *corev1.ServiceAccount
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			sa, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *networkingv1.NetworkPolicy:
			// The control plane has no network plugin to enforce it: the API server validates it.
			_, err = cs.NetworkingV1().NetworkPolicies(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			if _, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, dry); err == nil {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: o.Name + "-", Namespace: o.Namespace, Labels: o.Spec.Template.Labels}, Spec: o.Spec.Template.Spec}
				_, err = cs.CoreV1().Pods(o.Namespace).Create(ctx, pod, dry)
			}
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, dry)
		default:
			return nil, fmt.Errorf("deploy/kubectl-diagnose.yaml holds a %T the test does not install", obj)
		}
		if err != nil {
			return nil, fmt.Errorf("install %T: %w", obj, err)
		}
	}
	if sa == nil {
		return nil, errors.New("deploy/kubectl-diagnose.yaml holds no ServiceAccount")
	}
	return sa, nil
}

// shippedServeArgs are the arguments deploy/kubectl-diagnose.yaml's Deployment runs serve
// with, --listen's address replaced by listen: a test binds a free port on loopback.
func shippedServeArgs(t *testing.T, listen string) []string {
	t.Helper()
	objs, err := shippedManifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if d, ok := obj.(*appsv1.Deployment); ok {
			args := append([]string(nil), d.Spec.Template.Spec.Containers[0].Args...)
			for i := range args {
				if args[i] == "--listen" && i+1 < len(args) {
					args[i+1] = listen
				}
			}
			return args
		}
	}
	t.Fatal("deploy/kubectl-diagnose.yaml holds no Deployment")
	return nil
}

// serviceAccountToken creates a ServiceAccount in namespace and returns a token of it, as a
// pod running under it holds one.
func serviceAccountToken(t *testing.T, namespace, name string) (user, token string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return "system:serviceaccount:" + namespace + ":" + name, tok.Status.Token
}

// httpGetAs is httpGet with a bearer token ("" for none).
func httpGetAs(u, token string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err.Error()
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// renderAlerts writes deploy/alerts.yaml with FullCountZeroServing's `for: 5m` as `for: 10s`.
func renderAlerts(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "for: 5m") != 1 {
		t.Fatal("deploy/alerts.yaml should hold FullCountZeroServing's `for: 5m` once")
	}
	path := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "for: 5m", "for: 10s", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveProcess is a running `kubectl-diagnose serve`.
type serveProcess struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

func (s *serveProcess) log() string { return s.out.String() }

func startServe(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	cmd := exec.Command(binary, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent/kubeconfig")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveProcess{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill() // the test failed before it stopped serve
			<-s.done
		}
	})
	return s
}

// signal sends sig and returns the exit code once serve exits.
func (s *serveProcess) signal(sig syscall.Signal) (int, error) {
	if err := s.cmd.Process.Signal(sig); err != nil {
		return -1, err
	}
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		return -1, errors.New("serve did not exit within 15s")
	}
	var exit *exec.ExitError
	if errors.As(s.err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, s.err
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // only its port was wanted
	return addr
}

func httpGet(u string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

type promSample struct {
	labels map[string]string
	value  float64
}

// promQuery runs an instant query; a range selector's samples count as one per series.
func promQuery(base, q string) ([]promSample, error) {
	code, body := httpGet(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if code != http.StatusOK {
		return nil, fmt.Errorf("query %s: %d %s", q, code, body)
	}
	var resp struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	var out []promSample
	for _, r := range resp.Data.Result {
		s := promSample{labels: r.Metric}
		if len(r.Value) == 2 {
			if v, ok := r.Value[1].(string); ok {
				_, _ = fmt.Sscan(v, &s.value) // NaN and Inf stay 0; no series here has them
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// promSays returns "" when each query's series read as want: "name=value" per series, sorted,
// the name followed by the shape, or the cause and top suspect rule, when the series has them.
func promSays(base string, want map[string]string) string {
	var diffs []string
	for q, w := range want {
		ss, err := promQuery(base, q)
		if err != nil {
			return err.Error()
		}
		var got []string
		for _, s := range ss {
			key := s.labels["name"]
			if sh, ok := s.labels["shape"]; ok {
				key += "/" + sh
			}
			if c, ok := s.labels["cause"]; ok {
				key += "/" + c + "/" + s.labels["top_suspect_rule"]
			}
			got = append(got, fmt.Sprintf("%s=%g", key, s.value))
		}
		sort.Strings(got)
		if g := strings.Join(got, " "); g != w {
			diffs = append(diffs, fmt.Sprintf("%s = %q, want %q", q, g, w))
		}
	}
	return strings.Join(diffs, "\n")
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

// promAlerts lists the active (pending and firing) FullCountZeroServing alerts.
func promAlerts(base string) ([]promAlert, error) {
	code, body := httpGet(base + "/api/v1/alerts")
	if code != http.StatusOK {
		return nil, fmt.Errorf("alerts: %d %s", code, body)
	}
	var resp struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	var out []promAlert
	for _, a := range resp.Data.Alerts {
		if a.Labels["alertname"] == "FullCountZeroServing" {
			out = append(out, a)
		}
	}
	return out, nil
}

// TestServeBeforeTheServerAnswers runs serve against an API server address nothing listens
// on: it serves at once, not ready with the reason, counting the failed reads, and Ctrl-C
// stops it with 130.
func TestServeBeforeTheServerAnswers(t *testing.T) {
	t.Parallel()
	gone := freeAddr(t)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://" + gone, CertificateAuthorityData: cp.CAData()}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "unused"}
	kc.Contexts["gone"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "u", Namespace: "default"}
	kc.CurrentContext = "gone"
	path := filepath.Join(t.TempDir(), "gone.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	srv := startServe(t, "serve", "--kubeconfig", path, "--listen", addr, "--report")
	base := "http://" + addr
	eventually(t, 30*time.Second, func() string {
		code, body := httpGet(base + "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "nothing read yet: cannot reach the API server at "+gone) {
			return fmt.Sprintf("/readyz %d %q; log:\n%s", code, body, srv.log())
		}
		return ""
	})
	if code, body := httpGet(base + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d %q: the process serves, so it is live", code, body)
	}
	if code, _ := httpGet(base + "/report"); code != http.StatusServiceUnavailable {
		t.Errorf("/report before a read: %d, want 503", code)
	}
	_, metrics := httpGet(base + "/metrics")
	if !strings.Contains(metrics, "kubectl_diagnose_read_failing 1") || strings.Contains(metrics, "kubectl_diagnose_read_errors_total 0") || strings.Contains(metrics, "kubectl_diagnose_workload_") {
		t.Errorf("/metrics before a read, with reads failing:\n%s", grepLines(metrics, "kubectl_diagnose_"))
	}
	if !strings.Contains(srv.log(), "warning: cannot reach the API server at "+gone) {
		t.Errorf("serve's log does not say what fails:\n%s", srv.log())
	}
	if code, err := srv.signal(syscall.SIGINT); code != 130 || !strings.Contains(srv.log(), "error: interrupted by SIGINT") {
		t.Errorf("serve after SIGINT: exit %d (%v), want 130; log:\n%s", code, err, srv.log())
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// bearerOf is the token of a kubeconfig's current user.
func bearerOf(t *testing.T, kubeconfig string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	if ctx == nil || kc.AuthInfos[ctx.AuthInfo] == nil || kc.AuthInfos[ctx.AuthInfo].Token == "" {
		t.Fatalf("%s has no token", kubeconfig)
	}
	return kc.AuthInfos[ctx.AuthInfo].Token
}
