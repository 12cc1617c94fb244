package cmd

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
)

func parseServe(argv ...string) (*ServeOptions, error) {
	var got *ServeOptions
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := newRootCmd(streams, hooks{runServe: func(o *ServeOptions) error { got = o; return nil }})
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

func TestServeFlags(t *testing.T) {
	tests := []struct {
		name    string
		argv    string
		check   func(t *testing.T, o *ServeOptions)
		wantErr string
	}{
		// Loopback, no /report, the loopback names alone as Host headers: a server started by
		// hand answers no one else.
		{name: "defaults", argv: "serve", check: func(t *testing.T, o *ServeOptions) {
			if o.Listen != "127.0.0.1:8080" || o.Refresh != 30*time.Second || o.Source.AllNamespaces || o.Source.DumpPath != "" || !o.Source.Selector.Empty() {
				t.Errorf("defaults: listen %q refresh %s all %v dump %q selector %+v", o.Listen, o.Refresh, o.Source.AllNamespaces, o.Source.DumpPath, o.Source.Selector)
			}
			if o.Report || o.ReportAuth != "kubernetes" || len(o.acceptHosts) != 3 {
				t.Errorf("defaults: report %v auth %q accept hosts %v", o.Report, o.ReportAuth, o.acceptHosts)
			}
		}},
		{name: "as the Deployment runs it", argv: "serve --all-namespaces --listen :8080 --report", check: func(t *testing.T, o *ServeOptions) {
			if !o.Source.AllNamespaces || o.Listen != ":8080" || !o.Report || o.ReportAuth != "kubernetes" || o.acceptHosts != nil {
				t.Errorf("all %v listen %q report %v auth %q accept hosts %v", o.Source.AllNamespaces, o.Listen, o.Report, o.ReportAuth, o.acceptHosts)
			}
		}},
		{name: "a dump's report on loopback", argv: "serve --dump ./incident --report --report-auth none --accept-hosts ^diag\\.local$", check: func(t *testing.T, o *ServeOptions) {
			if !o.Report || o.ReportAuth != "none" || len(o.acceptHosts) != 1 || !o.acceptHosts[0].MatchString("diag.local") {
				t.Errorf("report %v auth %q accept hosts %v", o.Report, o.ReportAuth, o.acceptHosts)
			}
		}},
		{name: "scope and kubeconfig", argv: "serve -n payments -l tier=web --context prod --listen 127.0.0.1:9100 --refresh 0", check: func(t *testing.T, o *ServeOptions) {
			if o.Source.Namespace != "payments" || o.Source.Selector.Label != "tier=web" || *o.Source.ConfigFlags.Context != "prod" || o.Listen != "127.0.0.1:9100" || o.Refresh != 0 {
				t.Errorf("ns %q selector %+v context %q listen %q refresh %s", o.Source.Namespace, o.Source.Selector, *o.Source.ConfigFlags.Context, o.Listen, o.Refresh)
			}
		}},
		{name: "a dump may fix its reference time", argv: "serve --dump ./incident --at 2026-11-24T14:32:10Z", check: func(t *testing.T, o *ServeOptions) {
			if o.Source.DumpPath != "./incident" || o.Source.At == nil {
				t.Errorf("dump %q at %v", o.Source.DumpPath, o.Source.At)
			}
		}},
		{name: "listen without a port", argv: "serve --listen localhost", wantErr: `invalid --listen "localhost": want HOST:PORT, e.g. :8080 or 127.0.0.1:8080`},
		{name: "listen with an empty port", argv: "serve --listen 127.0.0.1:", wantErr: `invalid --listen "127.0.0.1:": want HOST:PORT, e.g. :8080 or 127.0.0.1:8080`},
		{name: "negative refresh", argv: "serve --refresh -1s", wantErr: "--refresh must be 0 or positive, got -1s"},
		{name: "an unchecked report on every interface", argv: "serve --listen :8080 --report --report-auth none", wantErr: `--report-auth none serves /report to whoever reaches the server; it needs a loopback --listen such as 127.0.0.1:8080, got ":8080"`},
		{name: "a dump's report without a cluster to check callers", argv: "serve --dump ./incident --report", wantErr: "--report of a dump has no cluster to check its callers with: add --report-auth none (on a loopback --listen)"},
		{name: "unknown report auth", argv: "serve --report-auth basic", wantErr: `invalid --report-auth "basic": use kubernetes or none`},
		{name: "bad accept-hosts", argv: "serve --accept-hosts (", wantErr: ""},
		{name: "show-secrets", argv: "serve --show-secrets", wantErr: ""},
		{name: "at on a live cluster", argv: "serve --at 2026-11-24T14:32:10Z", wantErr: "--at fixes the reference time of one read; serve follows a live cluster at the current time"},
		{name: "bad selector", argv: "serve -l tier==web,", wantErr: ""},
		{name: "namespace and all namespaces", argv: "serve -n a -A", wantErr: "--namespace and --all-namespaces cannot be used together"},
		{name: "arguments", argv: "serve deploy/x", wantErr: `"kubectl diagnose serve" takes no arguments, got ["deploy/x"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseServe(strings.Fields(tt.argv)...)
			if tt.check == nil {
				var usage *UsageError
				if !errors.As(err, &usage) || ExitCode(err) != ExitUsage {
					t.Fatalf("err = %v, want a usage error", err)
				}
				if tt.wantErr != "" && err.Error() != tt.wantErr {
					t.Errorf("err = %q, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

// TestServeADump runs serve on a scenario dump: it listens, serves the dump's diagnosis, and
// stops when its context ends.
func TestServeADump(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	source := NewSourceOptions(nil)
	source.DumpPath = scenarioDump("dev-ingester")
	addrs := make(chan net.Addr, 1)
	o := &ServeOptions{IOStreams: streams, Source: source, Listen: "127.0.0.1:0", listening: func(a net.Addr) { addrs <- a }}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("serve returned before it listened: %v", err)
	}
	base := "http://" + addr.String()
	var body string
	eventuallyOK := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(eventuallyOK) {
			t.Fatalf("/readyz not 200 within 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	body = string(b)
	if !strings.Contains(body, `kubectl_diagnose_workload_existing_copies{kind="Deployment",name="telemetry-ingester",namespace="dev-ingester"} 5`) {
		t.Errorf("/metrics lacks the dump's workload:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after its context ended: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("serve wrote to stdout: %q", out)
	}
	if want := "serving /metrics, /healthz and /readyz (/report is off) on " + base + " (dump " + source.DumpPath + ")\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}

// The first log line names the address as bound: every interface is not passed off as
// localhost.
func TestServeLogsTheBoundAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"[::1]:8080":     "http://[::1]:8080",
		"0.0.0.0:8080":   "http://0.0.0.0:8080 (every interface)",
		"[::]:8080":      "http://[::]:8080 (every interface)",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenURL(a); got != want {
			t.Errorf("listenURL(%s) = %q, want %q", addr, got, want)
		}
	}
}

func TestServeFailsWhenThePortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	source := NewSourceOptions(nil)
	source.DumpPath = scenarioDump("dev-ingester")
	o := &ServeOptions{IOStreams: streams, Source: source, Listen: ln.Addr().String()}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	err = o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "listen on "+ln.Addr().String()+": ") || !strings.Contains(err.Error(), "address already in use") || ExitCode(err) != ExitError {
		t.Errorf("serve on a taken port: %v (exit %d), want the address in use and exit 1", err, ExitCode(err))
	}
}

// serve --dump --report --report-auth none on loopback serves the dump's report redacted, and
// refuses a Host header that is not a loopback name.
func TestServeADumpsReportRedactedOnLoopback(t *testing.T) {
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addrs := make(chan net.Addr, 1)
	o, err := parseServe("serve", "--dump", dir, "--report", "--report-auth", "none", "--listen", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.listening = func(a net.Addr) { addrs <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	base := "http://" + (<-addrs).String()
	get := func(host string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, base+"/report", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(10 * time.Second)
	code, body := get("")
	for code == http.StatusServiceUnavailable && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		code, body = get("")
	}
	if code != http.StatusOK || !strings.Contains(body, "[redacted:") {
		t.Fatalf("/report: %d %s", code, body)
	}
	for _, s := range secretdump.Secrets {
		if strings.Contains(body, s) {
			t.Errorf("/report serves %q", s)
		}
	}
	if code, _ := get("rebound.attacker.example"); code != http.StatusForbidden {
		t.Errorf("/report with a foreign Host header: %d, want 403", code)
	}
}
