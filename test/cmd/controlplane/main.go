// Command controlplane runs the e2e tests' control plane (package controlplane: etcd,
// kube-apiserver and kube-controller-manager on loopback) outside a test, until it is
// interrupted. hack/fixtures/cluster.sh starts it to build the fixture dumps, so the fixtures and
// the e2e tests run on one harness.
//
//	go build -o /tmp/cp ./test/cmd/controlplane
//	/tmp/cp -kubeconfig /tmp/fixtures.kubeconfig -controllers deployment-controller,replicaset-controller
//
// The admin kubeconfig (system:masters) is written, whole, once the API server answers and the
// controllers run: its appearance is the signal that the control plane is ready. SIGINT or
// SIGTERM stops every process and removes the control plane's directory; a process that dies
// first ends the command with exit status 1 and the last lines of its log.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "controlplane:", err)
		os.Exit(1)
	}
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "write the admin kubeconfig here once the control plane is ready (required)")
	controllers := fs.String("controllers", strings.Join(controlplane.Controllers, ","), "kube-controller-manager controllers to run, comma-separated")
	var apiArgs, kcmArgs repeated
	fs.Var(&apiArgs, "apiserver-arg", "a flag to append to kube-apiserver's (repeatable; a later flag wins)")
	fs.Var(&kcmArgs, "controller-manager-arg", "a flag to append to kube-controller-manager's (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || fs.NArg() > 0 {
		return errors.New("usage: controlplane -kubeconfig PATH [-controllers LIST] [-apiserver-arg FLAG ...] [-controller-manager-arg FLAG ...]")
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Controllers:           strings.Split(*controllers, ","),
		APIServerArgs:         apiArgs,
		ControllerManagerArgs: kcmArgs,
		Logf:                  logf,
	})
	if err != nil {
		return err
	}
	defer cp.Stop()
	logf("controlplane: logs in %s", cp.Dir())
	if err := writeKubeconfig(cp, *kubeconfig); err != nil {
		return err
	}
	logf("controlplane: ready: KUBECONFIG=%s KUBECTL=%s", *kubeconfig, cp.Kubectl())
	for {
		select {
		case <-ctx.Done():
			logf("controlplane: stopping")
			return nil
		case <-time.After(time.Second):
			if err := cp.Err(); err != nil {
				return err // it quotes the end of the process's log, which Stop removes
			}
		}
	}
}

// writeKubeconfig writes the admin kubeconfig under a temporary name and renames it into place,
// so whoever waits for path never reads half of it.
func writeKubeconfig(cp *controlplane.ControlPlane, path string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := cp.WriteKubeconfig(tmp, controlplane.AdminUser, "default"); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
