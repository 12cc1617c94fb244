// Command scalegen builds the scale benchmark's namespace (package scalegen): on a control plane
// it starts itself (serve), on the cluster a kubeconfig reaches (load), or as a dump on disk
// (dump). serve and load keep playing the kubelets until interrupted. churn changes the pod
// statuses of a namespace one of them loaded, as its kubelets would, at a steady rate.
//
//	go run ./test/cmd/scalegen serve -deployments 2000 -kubeconfig-out /tmp/scale.kubeconfig
//	go run ./test/cmd/scalegen load -kubeconfig ~/.kube/config -deployments 50
//	go run ./test/cmd/scalegen dump -dir /tmp/scale-dump
//	go run ./test/cmd/scalegen churn -kubeconfig /tmp/scale.kubeconfig -rate 50 -duration 90s -markers 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/scalegen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalegen:", err)
		os.Exit(1)
	}
}

const usage = "usage: scalegen serve|load|dump|churn [flags]; scalegen <command> -h lists the flags"

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var opts scalegen.Options
	fs.StringVar(&opts.Namespace, "namespace", "scale", "namespace to build")
	fs.IntVar(&opts.Deployments, "deployments", 2000, "Deployments (each with a Service)")
	fs.IntVar(&opts.PodsPer, "pods-per", 10, "replicas per Deployment")
	fs.Float64Var(&opts.BrokenFraction, "broken", 0.1, "fraction of the Deployments that is broken")
	kubeconfigOut := fs.String("kubeconfig-out", "", "serve: write the admin kubeconfig here (namespace set) once loaded")
	kubeconfig := fs.String("kubeconfig", "", "load, churn: the cluster's kubeconfig")
	dir := fs.String("dir", "", "dump: the directory to write (must not exist or be empty)")
	timeout := fs.Duration("timeout", 60*time.Minute, "give up loading after this long")
	fs.IntVar(&opts.GrowTo, "grow-to", 0, "serve, load: size the nodes for this many Deployments and, on SIGUSR1 once loaded, grow the namespace to them (then write -grown-out)")
	grownOut := fs.String("grown-out", "", "serve, load: with -grow-to, write the admin kubeconfig here once grown and settled")
	var churn scalegen.ChurnOptions
	fs.Float64Var(&churn.Rate, "rate", 50, "churn: pod status writes per second")
	fs.DurationVar(&churn.Duration, "duration", 0, "churn: stop after this long (0: when interrupted)")
	fs.IntVar(&churn.Markers, "markers", 0, "churn: healthy workloads kept aside and broken one by one, one per SIGUSR1")
	fs.Uint64Var(&churn.Seed, "seed", 1, "churn: picks the pods")
	fs.IntVar(&churn.Workers, "workers", 64, "churn: status writes in flight at once at most")
	reset := fs.Bool("reset", false, "churn: only write back the settled status of every pod that restarted where its spec does not (a run that could not restore them)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)
	opts.Logf = logger.Printf
	switch args[0] {
	case "dump":
		if *dir == "" {
			return errors.New("dump needs -dir")
		}
		return scalegen.WriteDump(*dir, opts)
	case "churn":
		if *kubeconfig == "" {
			return errors.New("churn needs -kubeconfig")
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			return fmt.Errorf("read kubeconfig: %w", err)
		}
		if *reset {
			_, err := scalegen.Reset(ctx, cfg, opts.Namespace, logger.Printf)
			return err
		}
		return runChurn(ctx, cfg, opts.Namespace, churn, logger)
	case "load":
		if *kubeconfig == "" {
			return errors.New("load needs -kubeconfig")
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
		if err != nil {
			return fmt.Errorf("read kubeconfig: %w", err)
		}
		loadCtx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		l, err := scalegen.Load(loadCtx, cfg, opts)
		if err != nil {
			return err
		}
		defer l.Stop()
		logger.Printf("scalegen: loaded; playing the kubelets until interrupted")
		return waitAndGrow(ctx, l, opts, *timeout, logger, func() error {
			if *grownOut == "" {
				return nil
			}
			return os.WriteFile(*grownOut, []byte(*kubeconfig+"\n"), 0o600)
		})
	case "serve":
		cp, err := controlplane.Start(ctx, controlplane.Options{
			Logf:                  logger.Printf,
			ControllerManagerArgs: scalegen.ControllerManagerArgs,
		})
		if err != nil {
			return err
		}
		defer cp.Stop()
		logger.Printf("scalegen: control plane up; admin kubeconfig %s", cp.AdminKubeconfig())
		loadCtx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		l, err := scalegen.Load(loadCtx, cp.AdminConfig(), opts)
		if err != nil {
			return err
		}
		defer l.Stop()
		if *kubeconfigOut != "" {
			if err := cp.WriteKubeconfig(*kubeconfigOut, controlplane.AdminUser, opts.Namespace); err != nil {
				return err
			}
		}
		logger.Printf("scalegen: ready; kubeconfig %s, control plane in %s; interrupt to stop", *kubeconfigOut, cp.Dir())
		return waitAndGrow(ctx, l, opts, *timeout, logger, func() error {
			if *grownOut == "" {
				return nil
			}
			return cp.WriteKubeconfig(*grownOut, controlplane.AdminUser, opts.Namespace)
		})
	}
	return errors.New(usage)
}

// runChurn churns until the duration or an interrupt, breaking the next marker on each
// SIGUSR1, and logs what it wrote.
func runChurn(ctx context.Context, cfg *rest.Config, namespace string, opts scalegen.ChurnOptions, logger *log.Logger) error {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	mark := make(chan struct{})
	go func() {
		for range usr1 {
			select {
			case mark <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	opts.Namespace, opts.Mark, opts.Logf = namespace, mark, logger.Printf
	logger.Printf("scalegen: churn: pid %d; SIGUSR1 breaks the next marker", os.Getpid())
	s, err := scalegen.Churn(ctx, cfg, opts)
	secs := s.Elapsed.Seconds()
	logger.Printf("scalegen: churn: done: %d writes in %.1f s = %.2f/s (%d restarts, %d ready again), %d errors, %d ticks missed, %d markers",
		s.Writes(), secs, float64(s.Writes())/max(secs, 1e-9), s.Restarts, s.ReadyAgain, s.Errors, s.Missed, len(s.Markers))
	return err
}

// waitAndGrow waits for the end of ctx; with opts.GrowTo past the loaded size, a SIGUSR1 first
// grows the namespace to it (so one control plane is measured at two sizes without loading
// the first one twice) and calls grown once it has settled.
func waitAndGrow(ctx context.Context, l *scalegen.Loaded, opts scalegen.Options, timeout time.Duration, logger *log.Logger, grown func() error) error {
	if opts.GrowTo <= len(l.Workloads) {
		<-ctx.Done()
		return nil
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	logger.Printf("scalegen: send SIGUSR1 to pid %d to grow to %d Deployments", os.Getpid(), opts.GrowTo)
	select {
	case <-ctx.Done():
		return nil
	case <-usr1:
	}
	growCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := l.Grow(growCtx, opts.GrowTo); err != nil {
		return err
	}
	if err := grown(); err != nil {
		return err
	}
	logger.Printf("scalegen: grown to %d Deployments; interrupt to stop", opts.GrowTo)
	<-ctx.Done()
	return nil
}
