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
		{name: "defaults", argv: "serve", check: func(t *testing.T, o *ServeOptions) {
			if o.Listen != ":8080" || o.Refresh != 30*time.Second || o.Source.AllNamespaces || o.Source.DumpPath != "" || !o.Source.Selector.Empty() {
				t.Errorf("defaults: listen %q refresh %s all %v dump %q selector %+v", o.Listen, o.Refresh, o.Source.AllNamespaces, o.Source.DumpPath, o.Source.Selector)
			}
		}},
		{name: "as the Deployment runs it", argv: "serve --all-namespaces --listen :8080", check: func(t *testing.T, o *ServeOptions) {
			if !o.Source.AllNamespaces || o.Listen != ":8080" {
				t.Errorf("all %v listen %q", o.Source.AllNamespaces, o.Listen)
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
	if want := "serving /metrics, /report, /healthz and /readyz on " + base + " (dump " + source.DumpPath + ")\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
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
