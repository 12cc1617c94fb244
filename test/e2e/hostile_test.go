package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// oneErrorLine fails the test unless res is exit 1 with exactly one "error: " line holding want
// on stderr and nothing on stdout.
func oneErrorLine(t *testing.T, res result, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
	if res.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], want) {
		t.Errorf("exit %d stderr %q; want exit 1 and one error line containing %q", res.code, res.stderr, want)
	}
	if res.stdout != "" {
		t.Errorf("stdout = %q, want nothing: no report of what was not read", res.stdout)
	}
}

// forbidEverything answers every request as kube-apiserver answers an identity without any
// grant: a Forbidden status naming the resource.
func forbidEverything(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource, group := parts[len(parts)-1], ""
	if parts[0] == "apis" && len(parts) > 1 {
		group = parts[1]
	}
	qualified := resource
	if group != "" {
		qualified += "." + group
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s is forbidden: User \"system:anonymous\" cannot list resource \"%s\" in API group \"%s\" in the namespace \"default\"","reason":"Forbidden","details":{"group":%q,"kind":%q},"code":403}`+"\n",
		qualified, resource, group, group, resource)
}

// TestServersThatAreNotAnAPIServerExit1 points every one-shot command at servers that answer
// every request with 404 or 403: none of them may report an empty, healthy namespace.
func TestServersThatAreNotAnAPIServerExit1(t *testing.T) {
	t.Parallel()
	servers := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		// A web server, or a wrong port: Go's own 404 page.
		{"404 to every request", http.NotFound, "is not a Kubernetes API server: Error from server (NotFound): the server could not find the requested resource"},
		// A web server's catch-all page, and a JSON health endpoint answering every path.
		{"HTML page to every request", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprint(w, "<html><body>It works!</body></html>\n")
		}, "is not a Kubernetes API server: serializer for text/html"},
		{"200 JSON to every request", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"status":"ok"}`+"\n")
		}, "is not a Kubernetes API server: it answered the list of"},
		// A proxy in front of the API server refusing everything as text/plain.
		{
			"plain 403 to every request", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "Forbidden", http.StatusForbidden) },
			"cannot list any workload in namespace default: Error from server (Forbidden): Forbidden",
		},
		// kube-apiserver's refusal for an identity with no grant.
		{
			"Forbidden status to every request", forbidEverything,
			`cannot list any workload in namespace default: Error from server (Forbidden): deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments"`,
		},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			srv := httptest.NewServer(s.handler)
			t.Cleanup(srv.Close)
			kubeconfig := kubeconfigFor(t, srv.URL)
			out := filepath.Join(t.TempDir(), "dump")
			commands := [][]string{
				{"audit"},
				{"audit", "-o", "json", "--fail-on", "broken"},
				{"explain", "deploy/api"},
				{"dump", "--output-directory", out},
			}
			for _, args := range commands {
				res := diagnoseCmd(t, append(args, "--kubeconfig", kubeconfig, "--request-timeout", "5s")...)
				t.Logf("%s: exit %d: %s", strings.Join(args, " "), res.code, res.stderr)
				oneErrorLine(t, res, s.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("dump wrote %s (stat: %v); want no dump of a server that is not Kubernetes", out, err)
			}
		})
	}
}

// TestAnIdentityThatCannotListWorkloads runs the tool as identities of the real API server that
// may read pods but no workload kind, and that may read every workload kind but StatefulSets.
func TestAnIdentityThatCannotListWorkloads(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	if _, err := cs.AppsV1().Deployments(ns).Create(context.Background(), deployment("pull", missingImage, 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("no workload kind: one line, exit 1", func(t *testing.T) {
		podsOnly := cp.NewIdentity(t, ns, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: readVerbs}})
		want := fmt.Sprintf(`cannot list any workload in namespace %s: Error from server (Forbidden): deployments.apps is forbidden: User %q cannot list resource "deployments" in API group "apps" in the namespace %q; check the kubeconfig user's permissions with: kubectl auth can-i list deployments.apps -n %s`,
			ns, podsOnly.User, ns, ns)
		for _, args := range [][]string{{"audit"}, {"audit", "--fail-on", "broken"}, {"explain", "deploy/pull"}} {
			res := diagnoseCmd(t, append(args, "--kubeconfig", podsOnly.Kubeconfig)...)
			oneErrorLine(t, res, want)
		}
	})

	t.Run("one workload kind refused: the verdicts say so and --fail-on cannot pass", func(t *testing.T) {
		rules := readerRules(true)
		rules[0].Resources = []string{"deployments", "daemonsets", "replicasets", "controllerrevisions"}
		noSTS := cp.NewIdentity(t, ns, rules)
		res := diagnoseCmd(t, "audit", "-o", "json", "--fail-on", "starts-and-dies", "--kubeconfig", noSTS.Kubeconfig)
		if res.code != 1 || !strings.Contains(res.stderr, "error: --fail-on cannot pass: could not list StatefulSets in namespace "+ns) {
			t.Errorf("exit %d stderr %q; want exit 1 saying --fail-on cannot pass", res.code, res.stderr)
		}
		if !strings.Contains(res.stderr, "warning: could not read StatefulSet in namespace "+ns+": forbidden: User ") || strings.Contains(res.stderr, "forbidden: forbidden") {
			t.Errorf("stderr %q does not warn once that StatefulSets were forbidden", res.stderr)
		}
		r, err := decodeReport(res.stdout)
		if err != nil {
			t.Fatal(err)
		}
		w := r.find("Deployment", "pull")
		if w == nil {
			t.Fatalf("the report has no deployment pull: %+v", r.Workloads)
		}
		named := false
		for _, e := range w.Evidence {
			if e.Kind == "NotVisible" && strings.Contains(e.Message, "StatefulSet") {
				named = true
			}
		}
		if !named {
			t.Errorf("the verdict of pull does not name what was not seen:\n%s", w)
		}
	})
}

// proxy is a reverse proxy on loopback in front of the control plane's API server. It speaks TLS
// to the tool too: client-go sends no credentials to a plain HTTP server. before is called with each request before it is forwarded and may
// answer it itself by returning true.
type proxy struct {
	srv        *httptest.Server
	kubeconfig string
	requests   atomic.Int64
}

func newProxy(t *testing.T, namespace string, before func(w http.ResponseWriter, r *http.Request) bool) *proxy {
	t.Helper()
	target, err := url.Parse(cp.Host())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAData())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: false}
	// An API server that has gone away: the proxy drops the connection, as a load balancer
	// with no backend does, instead of answering for the API server.
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, herr := hj.Hijack(); herr == nil {
				_ = c.Close()
				return
			}
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	p := &proxy{}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if before != nil && before(w, r) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	token := cp.AdminConfig().BearerToken
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxied
  cluster: {server: %q, certificate-authority-data: %q}
users:
- name: admin
  user: {token: %q}
contexts:
- name: proxied
  context: {cluster: proxied, user: admin, namespace: %q}
current-context: proxied
`, p.srv.URL, base64.StdEncoding.EncodeToString(ca), token, namespace)
	if err := os.WriteFile(p.kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pendingCopies creates a Deployment of n copies in a fresh namespace and waits for the copies;
// without a kubelet they stay Pending, which is all these tests need.
func pendingCopies(t *testing.T, n int32) string {
	t.Helper()
	ns := cp.Namespace(t)
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment("many", missingImage, n, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() string {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(pods.Items) != int(n) {
			return fmt.Sprintf("%d of %d copies created", len(pods.Items), n)
		}
		return ""
	})
	return ns
}

// TestAPIServerStopsMidList stops the real API server when the tool asks for the second page
// of the pod list: every one-shot command fails in one line, at once rather than when
// --request-timeout runs out.
//
// Not parallel: it stops the package's one API server, and parallel tests wait until it is back.
func TestAPIServerStopsMidList(t *testing.T) {
	ns := pendingCopies(t, 3)
	for i, args := range [][]string{{"audit"}, {"explain", "deploy/many"}, {"dump", "--output-directory", filepath.Join(t.TempDir(), "dump")}} {
		t.Run(args[0], func(t *testing.T) {
			var (
				once      sync.Once
				stopping  atomic.Bool
				stoppedAt time.Time
				p         *proxy
			)
			t.Cleanup(func() {
				if stopping.Load() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := cp.StartAPIServer(ctx); err != nil {
						t.Fatalf("restart kube-apiserver: %v", err)
					}
					controllersBack(t, ns, fmt.Sprintf("canary-%d", i))
				}
			})
			p = newProxy(t, ns, func(_ http.ResponseWriter, r *http.Request) bool {
				if !strings.HasSuffix(r.URL.Path, "/pods") {
					return false
				}
				q := r.URL.Query()
				if q.Get("continue") != "" {
					// The second page: the API server goes away before it is served, and with
					// it the address the tool dials, which now refuses connections.
					once.Do(func() {
						stopping.Store(true)
						cp.StopAPIServer()
						stoppedAt = time.Now()
						_ = p.srv.Listener.Close()
					})
					return false
				}
				// One copy a page, so that there is a second page to lose. The tool lists at
				// resourceVersion 0, which the API server answers from its cache in one page
				// whatever the limit; without it the list is paged from etcd.
				q.Set("limit", "1")
				q.Del("resourceVersion")
				r.URL.RawQuery = q.Encode()
				return false
			})
			// The request for the second page waits in the proxy while the API server shuts
			// down gracefully, which takes seconds; the timeout leaves room for that.
			res := diagnoseCmd(t, append(args, "--kubeconfig", p.kubeconfig, "--request-timeout", "30s")...)
			ended := time.Now()
			if !stopping.Load() {
				t.Fatalf("the pod list was never asked for a second page: exit %d stderr %q", res.code, res.stderr)
			}
			t.Logf("exit %d in %v: %s", res.code, res.took, res.stderr)
			oneErrorLine(t, res, "cannot reach the API server at "+strings.TrimPrefix(p.srv.URL, "https://"))
			if d := ended.Sub(stoppedAt); d > 2*time.Second {
				t.Errorf("exited %v after the server stopped, want at once, not when --request-timeout runs out", d)
			}
		})
	}
}

// throttlingProxy answers the first attempt of every request as kube-apiserver's priority and
// fairness filter answers when it is saturated (429, Retry-After: 1, its text), and forwards
// the retries; refused counts the 429s.
func throttlingProxy(t *testing.T, ns string) (p *proxy, refused *atomic.Int64) {
	var (
		mu        sync.Mutex
		throttled = map[string]bool{}
	)
	refused = new(atomic.Int64)
	p = newProxy(t, ns, func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		key := r.URL.Path + "?" + r.URL.RawQuery
		if throttled[key] {
			return false
		}
		throttled[key] = true
		refused.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
		return true
	})
	return p, refused
}

// controllersBack waits until kube-controller-manager acts again after an outage of the API
// server: its informers back off while the server is down (up to 30s between retries), and the
// tests that run after this one need controllers that create copies.
func controllersBack(t *testing.T, ns, name string) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cp.AdminConfig())
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment(name, missingImage, 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() string {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return err.Error()
		}
		if len(pods.Items) == 0 {
			return "kube-controller-manager has not created the canary's copy since the API server came back"
		}
		return ""
	})
}

// TestThrottlingAPIServerIsWaitedOut: the read waits as the server tells it and gives the full
// report; on a terminal the progress line says the server is throttling.
func TestThrottlingAPIServerIsWaitedOut(t *testing.T) {
	t.Parallel()
	ns := pendingCopies(t, 2)
	p, refused := throttlingProxy(t, ns)
	res := diagnoseCmd(t, "audit", "-o", "json", "--kubeconfig", p.kubeconfig, "--request-timeout", "10s")
	if res.code != 0 {
		t.Fatalf("exit %d stderr %q; want the read to back off and finish", res.code, res.stderr)
	}
	r, err := decodeReport(res.stdout)
	if err != nil {
		t.Fatal(err)
	}
	if w := r.find("Deployment", "many"); w == nil || w.Counts.Existing != 2 {
		t.Errorf("report after throttling = %+v, want deployment many with its 2 copies", r.Workloads)
	}
	if refused.Load() < 12 {
		t.Errorf("%d requests were throttled, want one per kind listed at least", refused.Load())
	}
	// Retry-After was obeyed: the retries came a second later, not at once.
	if res.took < time.Second {
		t.Errorf("took %v, want at least the 1s the server asked to wait", res.took)
	}

	t.Run("on a terminal the progress line shows the time and the throttling", func(t *testing.T) {
		p, _ := throttlingProxy(t, ns)
		stdout, stderr := runOnTerminal(t, "audit", "-o", "json", "--kubeconfig", p.kubeconfig)
		t.Logf("terminal: %q", stderr)
		if _, err := decodeReport(stdout); err != nil {
			t.Error(err)
		}
		for _, want := range []string{"reading", " · 1s", "the API server throttled ", "retrying after up to 1s"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the terminal never showed %q: %q", want, stderr)
			}
		}
		if !strings.HasSuffix(stderr, "\r\x1b[K") {
			t.Errorf("the progress line is left on the terminal: %q", stderr)
		}
	})
}

// runOnTerminal runs the binary with stderr on a pseudo-terminal, as a person at a shell runs
// it, and stdout on a pipe; it returns both.
func runOnTerminal(t *testing.T, args ...string) (stdout, terminal string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = master.Close() }()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out, term bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&term, master) // ends with EIO once the last writer is gone
	}()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, slave
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent/kubeconfig")
	runErr := cmd.Run()
	_ = slave.Close()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		t.Fatal("the terminal did not close after the binary exited")
	}
	if runErr != nil {
		t.Fatalf("run on a terminal: %v; terminal %q", runErr, term.String())
	}
	// The terminal turns "\n" into "\r\n"; the line's own "\r" are the tool's.
	return out.String(), strings.ReplaceAll(term.String(), "\r\n", "\n")
}

// slowProxy delays every answer of the API server by delay.
func slowProxy(t *testing.T, ns string, delay time.Duration) *proxy {
	return newProxy(t, ns, func(_ http.ResponseWriter, r *http.Request) bool {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		return false
	})
}

// TestSlowAPIServer puts a proxy that delays every answer by seconds in front of the API server.
func TestSlowAPIServer(t *testing.T) {
	t.Parallel()
	ns := pendingCopies(t, 1)

	t.Run("--request-timeout bounds each request", func(t *testing.T) {
		p := slowProxy(t, ns, 10*time.Second)
		for _, args := range [][]string{{"audit"}, {"explain", "deploy/many"}, {"dump", "--output-directory", filepath.Join(t.TempDir(), "dump")}} {
			res := diagnoseCmd(t, append(args, "--kubeconfig", p.kubeconfig, "--request-timeout", "2s")...)
			t.Logf("%s: exit %d in %v: %s", args[0], res.code, res.took, res.stderr)
			oneErrorLine(t, res, "cannot reach the API server at "+strings.TrimPrefix(p.srv.URL, "https://")+": no answer within 2s; raise --request-timeout if it is slow")
			if res.took > 3*time.Second {
				t.Errorf("%s took %v, want within the 2s --request-timeout", args[0], res.took)
			}
		}
	})

	t.Run("a slow but answering server gives the report", func(t *testing.T) {
		p := slowProxy(t, ns, 1500*time.Millisecond)
		res := diagnoseCmd(t, "audit", "-o", "json", "--kubeconfig", p.kubeconfig, "--request-timeout", "5s")
		if res.code != 0 {
			t.Fatalf("exit %d stderr %q", res.code, res.stderr)
		}
		if r, err := decodeReport(res.stdout); err != nil || r.find("Deployment", "many") == nil {
			t.Errorf("report = %v (%v), want deployment many", res.stdout, err)
		}
	})

	for _, sig := range []struct {
		signal syscall.Signal
		code   int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(fmt.Sprintf("%v stops a slow read at once", sig.signal), func(t *testing.T) {
			p := slowProxy(t, ns, 30*time.Second)
			for _, args := range [][]string{{"audit"}, {"explain", "deploy/many"}, {"dump", "--output-directory", filepath.Join(t.TempDir(), "dump")}} {
				cmd := exec.Command(binary, append(args, "--kubeconfig", p.kubeconfig, "--request-timeout", "60s")...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent/kubeconfig")
				before := p.requests.Load()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				eventually(t, 10*time.Second, func() string {
					if p.requests.Load() == before {
						return "the read has not reached the server yet"
					}
					return ""
				})
				sent := time.Now()
				if err := cmd.Process.Signal(sig.signal); err != nil {
					t.Fatal(err)
				}
				err := cmd.Wait()
				took := time.Since(sent)
				code := cmd.ProcessState.ExitCode()
				if code != sig.code {
					t.Errorf("%s: exit %d (%v), want %d; stderr %q", args[0], code, err, sig.code, stderr.String())
				}
				if want := "error: interrupted by " + unix.SignalName(sig.signal) + "\n"; stdout.Len() > 0 || stderr.String() != want {
					t.Errorf("%s: stdout %q stderr %q, want nothing and %q", args[0], stdout.String(), stderr.String(), want)
				}
				if took > 2*time.Second {
					t.Errorf("%s: exited %v after the signal, want at once", args[0], took)
				}
			}
		})
	}
}

// TestMessagesNameWhatWasWrong runs the binary with the mistakes whose messages used to say
// too little or the wrong thing.
func TestMessagesNameWhatWasWrong(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing")
	res := diagnoseEnv(t, missing, "audit")
	oneErrorLine(t, res, "no kubeconfig found at "+missing+" (from KUBECONFIG); set KUBECONFIG or pass --kubeconfig")

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"explain", "deploy/a", "deploy/b"}, "error: explain takes one workload, got 2: deploy/a deploy/b"},
		{[]string{"dump", "--dump", "./incident", "--output-directory", filepath.Join(t.TempDir(), "out")}, "error: --dump cannot be used with dump, which reads the live cluster"},
	}
	for _, tt := range tests {
		res := diagnoseCmd(t, tt.args...)
		if res.code != 2 || !strings.HasPrefix(res.stderr, tt.want) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d stderr %q; want exit 2 and one line starting %q", strings.Join(tt.args, " "), res.code, res.stderr, tt.want)
		}
	}
}
