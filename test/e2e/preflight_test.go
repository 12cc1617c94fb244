package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// preflightDoc is the documented JSON of `preflight -o json`, decoded with unknown fields
// disallowed.
type preflightDoc struct {
	APIVersion      string              `json:"apiVersion"`
	Kind            string              `json:"kind"`
	CheckReferences bool                `json:"checkReferences"`
	Summary         map[string]int      `json:"summary"`
	Workloads       []preflightWorkload `json:"workloads"`
	Skipped         map[string]int      `json:"skipped"`
}

type preflightWorkload struct {
	Kind       string             `json:"kind"`
	Namespace  string             `json:"namespace"`
	Name       string             `json:"name"`
	Origin     string             `json:"origin"`
	Live       bool               `json:"live"`
	Result     string             `json:"result"`
	Checks     []preflightFinding `json:"checks"`
	Changes    []preflightChange  `json:"changes"`
	SignalGaps []signalGap        `json:"signalGaps"`
}

type preflightFinding struct {
	Check   string `json:"check"`
	Result  string `json:"result"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

type preflightChange struct {
	Path          string `json:"path"`
	Value         string `json:"value"`
	PreviousValue string `json:"previousValue"`
	Risk          string `json:"risk"`
	Shape         string `json:"shape"`
}

func (d *preflightDoc) workload(name string) *preflightWorkload {
	for i := range d.Workloads {
		if d.Workloads[i].Name == name {
			return &d.Workloads[i]
		}
	}
	return nil
}

// worst is the worst result of one check on the workload, "" when it did not run.
func (w *preflightWorkload) worst(check string) string {
	order := map[string]int{"pass": 1, "skipped": 2, "warn": 3, "fail": 4}
	got := ""
	for _, f := range w.Checks {
		if f.Check == check && order[f.Result] > order[got] {
			got = f.Result
		}
	}
	return got
}

func (w *preflightWorkload) finding(check, result string) *preflightFinding {
	for i := range w.Checks {
		if w.Checks[i].Check == check && w.Checks[i].Result == result {
			return &w.Checks[i]
		}
	}
	return nil
}

// preflightChecks are every check preflight runs, as -o json names them.
var preflightChecks = []string{"service-account", "node-fit", "quota", "pod-security", "probes", "service-selection", "image", "references"}

// secretValue is the Secret's data; no response the tool receives may carry it.
const secretValue = "s3cr3t-preflight-value"

// recordingProxy forwards to the API server and keeps what it saw of ConfigMap and Secret
// requests: the proof that only metadata crossed the wire.
type recordingProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []proxied
}

type proxied struct {
	method, path, accept, body string
}

func startRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	target, err := url.Parse(cp.Host())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAData())
	p := &recordingProxy{}
	rp := &httputil.ReverseProxy{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// Bodies are read as sent, not compressed.
			r.Out.Header.Del("Accept-Encoding")
		},
	}
	rp.ModifyResponse = func(resp *http.Response) error {
		path := resp.Request.URL.Path
		if !strings.Contains(path, "/secrets") && !strings.Contains(path, "/configmaps") {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.seen = append(p.seen, proxied{resp.Request.Method, path, resp.Request.Header.Get("Accept"), string(body)})
		p.mu.Unlock()
		return nil
	}
	// TLS: client-go sends a kubeconfig's credentials only to an https server.
	p.srv = httptest.NewTLSServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *recordingProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// kubeconfig writes a kubeconfig that reaches the API server through the proxy as user.
func (p *recordingProxy) kubeconfig(t *testing.T, token, namespace string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, CertificateAuthorityData: ca}
	kc.AuthInfos["preflight"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "preflight", Namespace: namespace}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// preflightRun runs `preflight -o json` (plus args) on a manifest file and decodes the document.
func preflightRun(t *testing.T, kubeconfig, file string, code int, args ...string) *preflightDoc {
	t.Helper()
	argv := append([]string{"preflight", "-f", file, "-o", "json", "--kubeconfig", kubeconfig}, args...)
	r := diagnoseCmd(t, argv...)
	if r.code != code {
		t.Fatalf("preflight exited %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var doc preflightDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode preflight -o json: %v\n%s", err, r.stdout)
	}
	if doc.APIVersion != "kubediagnose.dev/v1alpha1" || doc.Kind != "PreflightReport" {
		t.Errorf("apiVersion/kind = %s/%s", doc.APIVersion, doc.Kind)
	}
	return &doc
}

// writeManifests writes objects as one multi-document YAML stream, as kubectl and helm write it.
func writeManifests(t *testing.T, objs ...runtime.Object) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPreflight checks manifests against one namespace of the control plane, with the
// simulated kubelet running two live workloads on two tainted nodes of their own: for every
// check a manifest that passes and one that fails, asserted on -o json; a run as an identity
// that may only get ConfigMaps and Secrets, through a proxy that sees every byte, shows
// --check-references reads their metadata alone.
func TestPreflight(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	ctx := context.Background()
	pool := "preflight.kubediagnose.dev/pool"
	nodes := kubeletsim.DefaultNodes(ns, 2)
	for i := range nodes {
		nodes[i].Labels[pool] = ns
		nodes[i].Taints = []corev1.Taint{{Key: "dedicated", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		nodes[i].Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	}
	sim, err := kubeletsim.New(cp.AdminConfig(), world(), kubeletsim.Options{Nodes: nodes, Namespaces: []string{ns}, TimeScale: timeScale, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	simCtx, cancel := context.WithCancel(ctx)
	if err := sim.Start(simCtx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); sim.Stop() })
	e := &env{ns: ns, cs: kubernetes.NewForConfigOrDie(cp.AdminConfig()), sim: sim}

	// The namespace enforces baseline and warns at restricted; its quota leaves room for 200m.
	nsObj, err := e.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	nsObj.Labels["pod-security.kubernetes.io/warn"] = "restricted"
	if _, err := e.cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.cs.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("600m")}},
	}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = e.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = e.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config"}, Data: map[string]string{"LOG_LEVEL": secretValue}}, metav1.CreateOptions{})
	mustCreate(err)
	_, err = e.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-db"}, StringData: map[string]string{"password": secretValue}}, metav1.CreateOptions{})
	mustCreate(err)

	onPool := func(d *appsv1.Deployment) *appsv1.Deployment {
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		d.Spec.Template.Spec.NodeSelector = map[string]string{pool: ns}
		d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		return d
	}
	// Live: api (2 copies behind Service api) and web (2 copies labelled track=stable, behind
	// Service web, which selects that label).
	liveAPI := onPool(ingester("api", 2, reachableIntake))
	e.create(t, liveAPI, true)
	web := func(track string) *appsv1.Deployment {
		d := onPool(deployment("web", recommenderV1, 2, nil))
		d.Spec.Template.Labels = map[string]string{"app": "web", "track": track}
		return d
	}
	e.create(t, web("stable"), false)
	webSvc := service("web")
	webSvc.Spec.Selector = map[string]string{"app": "web", "track": "stable"}
	_, err = e.cs.CoreV1().Services(ns).Create(ctx, webSvc, metav1.CreateOptions{})
	mustCreate(err)
	e.waitServing(t, "api", 2)
	e.waitServing(t, "web", 2)
	eventually(t, 30*time.Second, func() string {
		q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if used := q.Status.Used[corev1.ResourceRequestsCPU]; used.Cmp(resource.MustParse("400m")) != 0 {
			return "quota used " + used.String() + ", want 400m"
		}
		return ""
	})

	// The identity may get and list what preflight reads, and only get ConfigMaps and Secrets.
	id := cp.NewIdentity(t, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts", "resourcequotas", "services", "pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get"}},
	})
	if err := cp.Grant(ctx, id.User, "", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
	}); err != nil {
		t.Fatal(err)
	}
	proxy := startRecordingProxy(t)
	kubeconfig := proxy.kubeconfig(t, id.Config.BearerToken, ns)

	// newOne is a new workload that passes every check but for its tag (a warning).
	newOne := func(name string, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
		d := onPool(deployment(name, recommenderV1, 1, nil))
		if mutate != nil {
			mutate(d)
		}
		return d
	}
	container := func(d *appsv1.Deployment) *corev1.Container { return &d.Spec.Template.Spec.Containers[0] }
	// api changes its endpoint, its image digest and adds an annotation; labels stay.
	apiNext := onPool(ingester("api", 2, otherIntake))
	container(apiNext).Image = "registry.sim.example/telemetry/ingester@sha256:9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f"
	apiNext.Spec.Template.Annotations = map[string]string{"kubediagnose.dev/owner": "shop"}
	passing := []runtime.Object{
		apiNext,
		newOne("sa-builder", func(d *appsv1.Deployment) { d.Spec.Template.Spec.ServiceAccountName = "builder" }),
		newOne("refs", func(d *appsv1.Deployment) {
			c := container(d)
			c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}}}}
			c.Env = []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "api-db"}, Key: "password",
			}}}}
		}),
		// Behind Service api but without a readiness probe: a signal gap, no failure.
		newOne("api-gapped", func(d *appsv1.Deployment) {
			d.Spec.Template.Labels = map[string]string{"app": "api", "variant": "gapped"}
			container(d).ReadinessProbe = nil
		}),
	}
	// A StatefulSet and a DaemonSet pass as the Deployments do; the DaemonSet has a copy per
	// node of the pool, 200m in all, just what the quota has left.
	stsTemplate := newOne("db", nil)
	passing = append(passing,
		&appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "db", Selector: stsTemplate.Spec.Selector, Template: stsTemplate.Spec.Template},
		},
		&appsv1.DaemonSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "agent"},
			Spec:       appsv1.DaemonSetSpec{Selector: stsTemplate.Spec.Selector, Template: newOne("agent", nil).Spec.Template},
		},
	)
	// Each fails one check, and only that one.
	failing := map[string]*appsv1.Deployment{
		"service-account":   newOne("sa-ghost", func(d *appsv1.Deployment) { d.Spec.Template.Spec.ServiceAccountName = "ghost" }),
		"node-fit":          newOne("fit-selector", func(d *appsv1.Deployment) { d.Spec.Template.Spec.NodeSelector[pool] = ns + "-none" }),
		"quota":             newOne("quota-scale", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }),
		"pod-security":      newOne("psa-hostnet", func(d *appsv1.Deployment) { d.Spec.Template.Spec.HostNetwork = true }),
		"probes":            newOne("probe-port", func(d *appsv1.Deployment) { container(d).ReadinessProbe.HTTPGet.Port = intstr.FromString("metrics") }),
		"service-selection": web("canary"),
		"image":             newOne("image-invalid", func(d *appsv1.Deployment) { container(d).Image = "registry.sim.example/Shop/Recommender:0.19.2" }),
		"references": newOne("refs-missing", func(d *appsv1.Deployment) {
			container(d).EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ghost-db"}}}}
		}),
	}
	// Two more ways to miss every node: an untolerated taint, requests no node holds.
	moreNodeFit := []*appsv1.Deployment{
		newOne("fit-taint", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Tolerations = nil }),
		newOne("fit-memory", func(d *appsv1.Deployment) {
			container(d).Resources.Requests[corev1.ResourceMemory] = resource.MustParse("64Gi")
			container(d).Resources.Limits[corev1.ResourceMemory] = resource.MustParse("64Gi")
		}),
	}
	all := slices.Clone(passing)
	for _, c := range preflightChecks {
		all = append(all, failing[c])
	}
	for _, d := range moreNodeFit {
		all = append(all, d)
	}
	allFile := writeManifests(t, all...)
	passFile := writeManifests(t, passing...)

	auditFrom := auditLogSize(t)
	t.Run("every check passes a good manifest and fails a bad one", func(t *testing.T) {
		doc := preflightRun(t, kubeconfig, allFile, 6, "--check-references")
		if !doc.CheckReferences || len(doc.Workloads) != len(all) {
			t.Fatalf("checkReferences %v, %d workloads, want %d", doc.CheckReferences, len(doc.Workloads), len(all))
		}
		for _, p := range passing {
			name := p.(metav1.Object).GetName()
			w := doc.workload(name)
			for _, c := range preflightChecks {
				if got := w.worst(c); got == "fail" || got == "" {
					t.Errorf("%s: %s = %q, want it to pass:\n%+v", name, c, got, w.Checks)
				}
			}
		}
		for check, d := range failing {
			w := doc.workload(d.Name)
			for _, c := range preflightChecks {
				got := w.worst(c)
				switch {
				case c == check && got != "fail":
					t.Errorf("%s: %s = %q, want fail:\n%+v", d.Name, c, got, w.Checks)
				case c != check && got == "fail":
					t.Errorf("%s: %s failed too:\n%+v", d.Name, c, w.finding(c, "fail"))
				}
			}
			if w.Result != "fail" {
				t.Errorf("%s: result %s, want fail", d.Name, w.Result)
			}
		}
		for _, d := range moreNodeFit {
			if got := doc.workload(d.Name).worst("node-fit"); got != "fail" {
				t.Errorf("%s: node-fit %q, want fail", d.Name, got)
			}
		}
		want := map[string]struct{ path, msg string }{
			"sa-ghost":      {"spec.template.spec.serviceAccountName", `serviceaccount "ghost" not found`},
			"fit-selector":  {"spec.template.spec.nodeSelector", "didn't match Pod's node affinity/selector"},
			"fit-taint":     {"spec.template.spec.tolerations", " node(s) had untolerated taint(s)"},
			"fit-memory":    {"spec.template.spec.containers[0].resources.requests[memory]", "2 Insufficient memory"},
			"quota-scale":   {"spec.template.spec.containers[0].resources.requests[cpu]", "requests.cpu is at 400m of 600m, and 3 new copies would add 300m"},
			"psa-hostnet":   {"spec.template.spec", `violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`},
			"probe-port":    {"spec.template.spec.containers[0].readinessProbe.httpGet.port", `targets port "metrics"`},
			"web":           {"spec.template.metadata.labels", "Service web selects today's copies but not the new template's labels (it needs track=stable)"},
			"image-invalid": {"spec.template.spec.containers[0].image", "InvalidImageName"},
			"refs-missing":  {"spec.template.spec.containers[0].envFrom[0].secretRef.name", "Secret ghost-db does not exist"},
		}
		checkOf := map[string]string{"fit-taint": "node-fit", "fit-memory": "node-fit"}
		for c, d := range failing {
			checkOf[d.Name] = c
		}
		for name, wf := range want {
			f := doc.workload(name).finding(checkOf[name], "fail")
			if f == nil || f.Path != wf.path || !strings.Contains(f.Message, wf.msg) {
				t.Errorf("%s: finding %+v, want path %s and %q", name, f, wf.path, wf.msg)
			}
		}
		// The nodes are the cluster's: a test running beside this one may add tainted nodes of
		// its own, and the scheduler counts every node it filters out, so at least this test's
		// two tainted nodes are among them.
		if f := doc.workload("fit-taint").finding("node-fit", "fail"); f != nil {
			m := regexp.MustCompile(`0/(\d+) nodes are available: (\d+) node\(s\) had untolerated taint\(s\)`).FindStringSubmatch(f.Message)
			if m == nil {
				t.Errorf("fit-taint: %q does not count the nodes with untolerated taints", f.Message)
			} else if all, tainted := atoi(m[1]), atoi(m[2]); tainted < 2 || tainted > all {
				t.Errorf("fit-taint: %d of %d nodes had untolerated taints, want this test's 2 among them", tainted, all)
			}
		}
		if sts, ds := doc.workload("db"), doc.workload("agent"); sts.Kind != "StatefulSet" || ds.Kind != "DaemonSet" {
			t.Errorf("kinds %s and %s", sts.Kind, ds.Kind)
		}
		if f := doc.workload("agent").finding("quota", "pass"); f == nil || !strings.Contains(f.Message, "2 new copies (one per node it fits)") {
			t.Errorf("quota of the DaemonSet: %+v", doc.workload("agent").Checks)
		}
		// Both nodes fit the good manifests, against what the bound copies request.
		if f := doc.workload("sa-builder").finding("node-fit", "pass"); f == nil || !strings.Contains(f.Message, "fits on 2 of") {
			t.Errorf("node-fit of sa-builder: %+v", f)
		}
		// api's rollout surges one copy of 100m into the 200m left.
		if f := doc.workload("api").finding("quota", "pass"); f == nil || !strings.Contains(f.Message, "1 surge copy (maxSurge 25% of 2 replicas, from 2 today)") {
			t.Errorf("quota of api: %+v", f)
		}
		// The namespace warns at restricted: every template gets that warning, not a failure.
		if f := doc.workload("api").finding("pod-security", "warn"); f == nil || !strings.Contains(f.Message, `warn level "restricted:latest"`) {
			t.Errorf("pod-security of api: %+v", doc.workload("api").Checks)
		}
		if f := doc.workload("refs").finding("references", "pass"); f == nil || !strings.Contains(f.Message, "no data read") {
			t.Errorf("references of refs: %+v", doc.workload("refs").Checks)
		}
		// The diff against api's live revision: what the API server defaulted is no change.
		api := doc.workload("api")
		var changes []string
		for _, c := range api.Changes {
			changes = append(changes, c.Risk+" "+c.Path)
		}
		wantChanges := []string{
			"high spec.template.spec.containers[0].env[0].value",
			"high spec.template.spec.containers[0].image",
			"low spec.template.metadata.annotations",
		}
		if !api.Live || strings.Join(changes, "; ") != strings.Join(wantChanges, "; ") {
			t.Errorf("api live %v, changes %v, want %v", api.Live, changes, wantChanges)
		}
		if c := api.Changes[0]; c.PreviousValue != reachableIntake || c.Value != otherIntake {
			t.Errorf("env change %+v", c)
		}
		if gaps := doc.workload("api-gapped").SignalGaps; len(gaps) != 1 || gaps[0].Path != "spec.template.spec.containers[0].readinessProbe" {
			t.Errorf("signal gaps of api-gapped: %+v", gaps)
		}
		if gaps := api.SignalGaps; len(gaps) != 0 {
			t.Errorf("signal gaps of api: %+v", gaps)
		}
	})

	t.Run("the references were read by metadata alone", func(t *testing.T) {
		reqs := proxy.requests()
		asked := map[string]bool{}
		for _, r := range reqs {
			asked[r.path] = true
			if r.method != http.MethodGet || r.accept != "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1" {
				t.Errorf("%s %s with Accept %q", r.method, r.path, r.accept)
			}
			if strings.Contains(r.body, secretValue) || strings.Contains(r.body, base64.StdEncoding.EncodeToString([]byte(secretValue))) || strings.Contains(r.body, `"data"`) {
				t.Errorf("%s answered with data: %s", r.path, r.body)
			}
		}
		for _, p := range []string{"secrets/api-db", "configmaps/api-config", "secrets/ghost-db"} {
			if !asked["/api/v1/namespaces/"+ns+"/"+p] {
				t.Errorf("no lookup of %s among %v", p, reqs)
			}
		}
		entries := auditEntriesOf(t, id.User, auditFrom, 3)
		for _, a := range entries {
			what := fmt.Sprintf("%s %s (agent %q)", a.Verb, a.RequestURI, a.UserAgent)
			if a.Verb != "get" && a.Verb != "list" {
				t.Errorf("preflight wrote: %s", what)
			}
			if r := a.ObjectRef.Resource; (r == "secrets" || r == "configmaps") && (a.Verb != "get" || !strings.Contains(a.UserAgent, "metadata only")) {
				t.Errorf("the audit log shows a read of %s that is not a metadata get: %s", r, what)
			}
		}
	})

	t.Run("without --check-references ConfigMaps and Secrets are not touched; good manifests exit 0", func(t *testing.T) {
		before, from := len(proxy.requests()), auditLogSize(t)
		doc := preflightRun(t, kubeconfig, passFile, 0)
		if doc.CheckReferences {
			t.Error("checkReferences without the flag")
		}
		if f := doc.workload("refs").finding("references", "skipped"); f == nil || !strings.Contains(f.Message, "--check-references") {
			t.Errorf("references of refs: %+v", doc.workload("refs").Checks)
		}
		if n := len(proxy.requests()); n != before {
			t.Errorf("%d ConfigMap or Secret requests without --check-references", n-before)
		}
		for _, a := range auditEntriesOf(t, id.User, from, 1) {
			if r := a.ObjectRef.Resource; r == "secrets" || r == "configmaps" {
				t.Errorf("the audit log shows %s %s", a.Verb, a.RequestURI)
			}
		}
	})

	t.Run("table and markdown", func(t *testing.T) {
		r := diagnoseCmd(t, "preflight", "-f", allFile, "--kubeconfig", kubeconfig)
		t.Logf("preflight table:\n%s", r.stdout)
		// Without --check-references the missing Secret is not looked up: nine failures.
		if r.code != 6 || !strings.HasSuffix(r.stderr, "error: 9 preflight checks failed\n") {
			t.Errorf("table: exit %d, stderr %q", r.code, r.stderr)
		}
		if !hasTableRow(r.stdout, "fail", ns, "deployment/sa-ghost", "service-account", "spec.template.spec.serviceAccountName") ||
			!strings.Contains(r.stdout, "Changes of deployment/api in "+ns+" against the live revision") {
			t.Errorf("table:\n%s", r.stdout)
		}
		md := diagnoseCmd(t, "preflight", "-f", "-", "-o", "markdown", "--kubeconfig", kubeconfig)
		if md.code != 1 || !strings.Contains(md.stderr, "no Deployment, StatefulSet or DaemonSet in -") {
			t.Errorf("empty stdin: exit %d, stderr %q", md.code, md.stderr)
		}
		md = diagnoseCmd(t, "preflight", "-f", passFile, "-o", "markdown", "--kubeconfig", kubeconfig)
		if md.code != 0 || !strings.Contains(md.stdout, "| warn | image | `spec.template.spec.containers[0].image` |") ||
			!strings.Contains(md.stdout, "### Changes against the live revision, riskiest first") {
			t.Errorf("markdown: exit %d\n%s\n%s", md.code, md.stdout, md.stderr)
		}
	})
}

func hasTableRow(table string, cells ...string) bool {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return true
		}
	}
	return false
}

// auditLogSize is where the audit log ends now: the entries of a later run start there.
func auditLogSize(t *testing.T) int64 {
	t.Helper()
	st, err := os.Stat(cp.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// auditEntriesOf returns the user's audit entries after offset, waiting for at least least.
func auditEntriesOf(t *testing.T, user string, offset int64, least int) []auditEntry {
	t.Helper()
	var out []auditEntry
	eventually(t, 15*time.Second, func() string {
		all, err := readAuditLogFrom(cp.AuditLogPath(), offset)
		if err != nil {
			return err.Error()
		}
		out = out[:0]
		for _, a := range all {
			if a.User.Username == user {
				out = append(out, a)
			}
		}
		if len(out) < least {
			return fmt.Sprintf("%d audit entries of %s, want at least %d", len(out), user, least)
		}
		return ""
	})
	return out
}

func readAuditLogFrom(path string, offset int64) ([]auditEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	var out []auditEntry
	for _, l := range bytes.Split(data[min(offset, int64(len(data))):], []byte("\n")) {
		var a auditEntry
		if json.Unmarshal(l, &a) == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
