// Command fleetbench measures `audit` over a fleet of contexts against the slowest of its
// contexts read alone. It starts -control-planes real control planes (etcd, kube-apiserver,
// kube-controller-manager from the e2e assets) one after another, gives each -contexts-per
// namespaces of Deployments whose copies stay Pending (there is no scheduler), writes one
// kubeconfig with a context per namespace, times the built binary, and stops every control
// plane it started before it exits, on an error and on Ctrl-C too. It is not part of `make
// test`; docs/performance.md says how to run it and what it measured.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/cmd"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

func main() {
	if mode := os.Getenv(bareEnv); mode != "" {
		runChild(mode)
		return
	}
	planes := flag.Int("control-planes", 2, "control planes to start (at most 4)")
	per := flag.Int("contexts-per", 10, "contexts (namespaces) per control plane")
	deploys := flag.Int("deployments", 10, "Deployments per namespace")
	replicas := flag.Int("replicas", 2, "copies per Deployment (they stay Pending)")
	runs := flag.Int("runs", 3, "runs of each measurement; the median is reported (0: no measurement, only -cpuprofile)")
	profile := flag.String("cpuprofile", "", "after the measurements, run the fleet in this process 10 times and write a CPU profile here")
	memProfile := flag.String("memprofile", "", "with -cpuprofile: write an allocation profile of the same 10 in-process runs here")
	rtts := flag.String("rtts", "0", "comma-separated round-trip times a proxy in front of each API server adds (e.g. 0,50ms), each measured in turn")
	compare := flag.String("compare", "", "another build of kubectl-diagnose (e.g. main's) to measure beside this checkout's, run for run, in the same minutes")
	boundsFlag := flag.String("bounds", "1,4,8,all", "comma-separated --max-parallel-contexts values the fleet is measured at (all: one per context)")
	floor := flag.Bool("floor", true, "also measure the floor at each bound: the same lists sent by a bare client that discards the bodies, and kubectl get of the same kinds per context")
	auditLog := flag.Bool("audit-log", false, "run the API servers with the e2e harness's audit log (every request at Metadata level, written before the answer); off, they keep no audit log, as the e2e harness's default has one")
	flag.Parse()
	if *runs < 0 || *runs == 0 && *profile == "" {
		fmt.Fprintln(os.Stderr, "error: -runs 0 measures nothing; it takes -cpuprofile")
		os.Exit(2)
	}
	if *memProfile != "" && *profile == "" {
		fmt.Fprintln(os.Stderr, "error: -memprofile profiles the -cpuprofile runs; pass both")
		os.Exit(2)
	}
	if *memProfile != "" {
		// Finer than the default of one sample per 512 KiB: a context allocates a few MiB.
		runtime.MemProfileRate = 16 << 10
	}
	if *planes < 1 || *planes > 4 {
		fmt.Fprintln(os.Stderr, "error: -control-planes takes 1 to 4")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var delays []time.Duration
	for _, r := range strings.Split(*rtts, ",") {
		if r == "0" {
			delays = append(delays, 0)
			continue
		}
		d, err := time.ParseDuration(r)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "error: -rtts: bad duration %q\n", r)
			os.Exit(2)
		}
		delays = append(delays, d)
	}
	var bounds []int
	for _, b := range strings.Split(*boundsFlag, ",") {
		if b == "all" {
			bounds = append(bounds, 0)
			continue
		}
		n, err := strconv.Atoi(b)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "error: -bounds: bad bound %q\n", b)
			os.Exit(2)
		}
		bounds = append(bounds, n)
	}
	err := run(ctx, *planes, *per, *deploys, int32(*replicas), *runs, delays, *profile, *memProfile, *compare, bounds, *floor, *auditLog)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, planes, per, deploys int, replicas int32, runs int, rtts []time.Duration, profile, memProfile, compare string, bounds []int, floor, auditLog bool) error {
	dir, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	binary, err := build(dir, ".", "kubectl-diagnose")
	if err != nil {
		return err
	}
	bare, err := build(dir, "./test/fleetbench/barelists", "barelists")
	if err != nil {
		return err
	}
	binaries := []string{binary}
	if compare != "" {
		binaries = append(binaries, compare)
	}
	var cps []*controlplane.ControlPlane
	defer func() {
		for _, cp := range cps {
			cp.Stop()
		}
	}()
	// direct reaches the API servers straight, for the loopback rounds: the proxy would add
	// this process's copying to the two cores; proxied goes through the proxies.
	direct, proxied := clientcmdapi.NewConfig(), clientcmdapi.NewConfig()
	var apiArgs []string
	if !auditLog {
		// Later flags win: no policy, no log, no audit filter on the request path.
		apiArgs = []string{"--audit-policy-file=", "--audit-log-path="}
	}
	kubectl := ""
	var contexts []string
	// delay is half the round trip the proxies add, each way; set per measurement.
	var delay atomic.Int64
	for i := range planes {
		start := time.Now()
		cp, err := controlplane.Start(ctx, controlplane.Options{Logf: logf, APIServerArgs: apiArgs})
		if err != nil {
			return fmt.Errorf("control plane %d: %w", i, err)
		}
		cps = append(cps, cp)
		kubectl = cp.Kubectl()
		logf("control plane %d ready in %s", i, time.Since(start).Round(time.Second))
		names, err := seed(ctx, cp, per, deploys, replicas)
		if err != nil {
			return fmt.Errorf("seed control plane %d: %w", i, err)
		}
		admin, err := clientcmd.LoadFromFile(cp.AdminKubeconfig())
		if err != nil {
			return err
		}
		ac := admin.Contexts[admin.CurrentContext]
		cluster, user := fmt.Sprintf("cp%d", i), fmt.Sprintf("cp%d-admin", i)
		p, err := newDelayProxy(ctx, strings.TrimPrefix(cp.Host(), "https://"), &delay)
		if err != nil {
			return err
		}
		defer func() { _ = p.Close() }()
		for _, kc := range []*clientcmdapi.Config{direct, proxied} {
			c := *admin.Clusters[ac.Cluster]
			kc.Clusters[cluster] = &c
			kc.AuthInfos[user] = admin.AuthInfos[ac.AuthInfo]
			for j, ns := range names {
				kc.Contexts[fmt.Sprintf("cp%d-ns%02d", i, j)] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user, Namespace: ns}
			}
		}
		proxied.Clusters[cluster].Server = "https://" + p.Addr().String()
		for j := range names {
			contexts = append(contexts, fmt.Sprintf("cp%d-ns%02d", i, j))
		}
	}
	directPath, proxiedPath := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "kubeconfig-proxied")
	plans := map[string]floorPlan{}
	for path, kc := range map[string]*clientcmdapi.Config{directPath: direct, proxiedPath: proxied} {
		kc.CurrentContext = contexts[0]
		if err := clientcmd.WriteToFile(*kc, path); err != nil {
			return err
		}
		lists, err := writePlan(kc, contexts, path+".plan")
		if err != nil {
			return err
		}
		plans[path] = floorPlan{bare: bare, plan: path + ".plan", lists: lists}
	}
	if err := waitPods(ctx, cps, len(contexts)*deploys*int(replicas)); err != nil {
		return err
	}

	fmt.Printf("contexts: %d on %d control planes; %d Deployments x %d copies per context (%d pods in all); API servers' audit log: %v\n",
		len(contexts), planes, deploys, replicas, len(contexts)*deploys*int(replicas), auditLog)
	for _, rtt := range rtts {
		if runs == 0 {
			break
		}
		delay.Store(int64(rtt / 2))
		path := directPath
		if rtt > 0 {
			path = proxiedPath
		}
		var fl *floorPlan
		if floor {
			p := plans[path]
			p.kubectl = kubectl
			fl = &p
		}
		if err := measureAll(ctx, runs, binaries, path, contexts, rtt, bounds, fl, cps); err != nil {
			return err
		}
	}
	if profile != "" {
		delay.Store(0)
		return profileFleet(ctx, profile, memProfile, directPath, contexts)
	}
	return nil
}

// profileFleet runs the fleet's audit in this process, so a CPU profile sees it, and, when
// memFile is set, writes the allocations of those runs alone.
func profileFleet(ctx context.Context, file, memFile, kubeconfig string, contexts []string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	// One warm-up run first: the profile is of a fleet's steady cost, not of this process's
	// first connections and its type caches.
	if err := auditInProcess(ctx, kubeconfig, contexts); err != nil {
		return err
	}
	if memFile != "" {
		// The allocations before this point (seeding, waiting for pods) are written to
		// memFile.base, for go tool pprof -base.
		runtime.GC()
		if err := writeAllocs(memFile + ".base"); err != nil {
			return err
		}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	for range 10 {
		if err := auditInProcess(ctx, kubeconfig, contexts); err != nil {
			pprof.StopCPUProfile()
			return err
		}
	}
	pprof.StopCPUProfile()
	logf("CPU profile of 10 fleet audits written to %s", file)
	if memFile == "" {
		return nil
	}
	runtime.GC()
	if err := writeAllocs(memFile); err != nil {
		return err
	}
	logf("allocation profile written to %s; the 10 runs alone: go tool pprof -sample_index=alloc_space -base %s.base %s", memFile, memFile, memFile)
	return nil
}

func writeAllocs(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// auditInProcess runs `audit -o json` over every context once in this process.
func auditInProcess(ctx context.Context, kubeconfig string, contexts []string) error {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	root := cmd.NewRootCmd(streams)
	root.SetArgs([]string{"audit", "-o", "json", "--kubeconfig", kubeconfig, "--context", strings.Join(contexts, ",")})
	if err := root.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("in-process audit: %w", err)
	}
	return nil
}

// measureAll times each context alone, then the fleet at several bounds, and prints a table
// with a column per binary; the binaries take turns run for run, so they share the minutes.
func measureAll(ctx context.Context, runs int, binaries []string, path string, contexts []string, rtt time.Duration, bounds []int, floor *floorPlan, cps []*controlplane.ControlPlane) error {
	nb := len(binaries)
	single := make([][]measure, len(contexts))
	sum := make([]measure, nb)
	for i, c := range contexts {
		m, err := medians(ctx, runs, binaries, path, "--context", c)
		if err != nil {
			return err
		}
		single[i] = m
		for b := range nb {
			sum[b].wall += m[b].wall
			sum[b].cpu += m[b].cpu
			sum[b].server += m[b].server
			sum[b].rss = max(sum[b].rss, m[b].rss)
		}
	}
	// The fastest and slowest single contexts are each binary's own.
	fastest, slowest := make([]measure, nb), make([]measure, nb)
	for b := range nb {
		fastest[b], slowest[b] = single[0][b], single[0][b]
		for i := range contexts {
			if single[i][b].wall < fastest[b].wall {
				fastest[b] = single[i][b]
			}
			if single[i][b].wall > slowest[b].wall {
				slowest[b] = single[i][b]
			}
		}
	}
	all := strings.Join(contexts, ",")
	idleStart := serverCPU()
	time.Sleep(2 * time.Second)
	idle := (serverCPU() - idleStart) / 2
	fmt.Printf("\nround trip added: %s; load average at the start: %s; the servers' CPU while idle: %s per second\n",
		rtt, loadavg(), msOf(idle))
	head, rule := "| run |", "|---|"
	for _, b := range binaries {
		head += fmt.Sprintf(" %s: wall | CPU | servers' CPU | max RSS |", filepath.Base(b))
		rule += "---:|---:|---:|---:|"
	}
	fmt.Println(head)
	fmt.Println(rule)
	row := func(name string, ms []measure) {
		line := "| " + name + " |"
		for _, m := range ms {
			line += fmt.Sprintf(" %s | %s | %s | %d MB |", msOf(m.wall), msOf(m.cpu), msOf(m.server), m.rss>>20)
		}
		fmt.Println(line)
	}
	row("fastest single context", fastest)
	row("slowest single context", slowest)
	row(fmt.Sprintf("the %d contexts one after another, one process each (sum; max RSS of one)", len(contexts)), sum)
	for _, bound := range bounds {
		if bound == 0 {
			bound = len(contexts)
		}
		m, err := medians(ctx, runs, binaries, path, "--context", all, "--max-parallel-contexts", fmt.Sprint(bound))
		if err != nil {
			return err
		}
		note := ""
		if bound == 8 {
			note = " (the default)"
		}
		row(fmt.Sprintf("`--context <all %d> --max-parallel-contexts %d`%s", len(contexts), bound, note), m)
	}
	if floor != nil {
		if err := measureFloor(ctx, runs, path, contexts, bounds, *floor, idle); err != nil {
			return err
		}
		tool, err := countLists(ctx, cps, command{argv: []string{binaries[0], "audit", "-o", "json", "--kubeconfig", path, "--context", all}})
		if err != nil {
			return err
		}
		bare, err := countLists(ctx, cps, command{argv: []string{floor.bare, floor.plan, "8"}})
		if err != nil {
			return err
		}
		fmt.Printf("\nwhat the API servers counted in one run: %s's fleet at the default bound: %s; the bare client's: %s\n", filepath.Base(binaries[0]), tool, bare)
	}
	fmt.Printf("load average at the end: %s\n", loadavg())
	return nil
}

// measureFloor times the same fleet's lists sent by a bare client (bareLists), at each bound,
// and kubectl get of the same kinds per context at the default bound, and prints what the
// servers spent per list.
func measureFloor(ctx context.Context, runs int, path string, contexts []string, bounds []int, fp floorPlan, idle time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	all := strings.Join(contexts, ",")
	lists := fp.lists
	fmt.Printf("\nthe floor: %d lists per fleet read (%d kinds per context, Nodes once per server); servers' CPU per list after their idle share\n", lists, len(snapshot.Kinds)-1)
	fmt.Println("| run | wall | CPU | servers' CPU | servers' CPU per list | max RSS |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	row := func(name string, m measure) {
		per := (m.server - time.Duration(float64(idle)*m.wall.Seconds())) / time.Duration(lists)
		fmt.Printf("| %s | %s | %s | %s | %.2f ms | %d MB |\n", name, msOf(m.wall), msOf(m.cpu), msOf(m.server), float64(per)/float64(time.Millisecond), m.rss>>20)
	}
	for _, bound := range bounds {
		if bound == 0 {
			bound = len(contexts)
		}
		m, err := mediansOf(ctx, runs, []command{{argv: []string{fp.bare, fp.plan, strconv.Itoa(bound)}}})
		if err != nil {
			return err
		}
		row(fmt.Sprintf("bare client, the same lists, bodies discarded, %d contexts at once", bound), m[0])
	}
	if fp.kubectl == "" {
		return nil
	}
	m, err := mediansOf(ctx, runs, []command{{argv: []string{self, fp.kubectl, path, "8", all}, env: []string{bareEnv + "=kubectl"}}})
	if err != nil {
		return err
	}
	row("`kubectl get` of the same kinds, a process per context and one more per server for Nodes, 8 at once", m[0])
	return nil
}

// seed creates per namespaces, each with deploys Deployments of replicas copies.
func seed(ctx context.Context, cp *controlplane.ControlPlane, per, deploys int, replicas int32) ([]string, error) {
	cs, err := kubernetes.NewForConfig(cp.AdminConfig())
	if err != nil {
		return nil, err
	}
	var names []string
	for range per {
		ns, err := cp.CreateNamespace(ctx, "fleet-")
		if err != nil {
			return nil, err
		}
		names = append(names, ns)
		for k := range deploys {
			name := fmt.Sprintf("web-%02d", k)
			labels := map[string]string{"app": name}
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To(replicas),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name: "web", Image: "registry.example/shop/web:1.4.2",
							Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						}}},
					},
				},
			}
			if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// waitPods waits until the controllers have created every copy.
func waitPods(ctx context.Context, cps []*controlplane.ControlPlane, want int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		n := 0
		for _, cp := range cps {
			cs, err := kubernetes.NewForConfig(cp.AdminConfig())
			if err != nil {
				return err
			}
			pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			n += len(pods.Items)
		}
		if n >= want {
			logf("%d pods created", n)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%d of %d pods created", n, want)
		}
		time.Sleep(time.Second)
	}
}

// measure is one run's wall time, the CPU time the process used, its peak resident size, and
// the CPU time the API servers and etcds spent meanwhile (serving it, and their own background
// work: -idle measures that).
type measure struct {
	wall, cpu, server time.Duration
	rss               int64
}

// serverCPU is the CPU time (user+sys) the kube-apiservers and etcds this process started have
// used so far, at the kernel's 10 ms resolution.
func serverCPU() time.Duration {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	me := strconv.Itoa(os.Getpid())
	var ticks int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15, counted after the ")".
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm, f := s[open+1:end], strings.Fields(s[end+1:])
		if len(f) < 13 || f[1] != me || (comm != "kube-apiserver" && comm != "etcd") {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// medians runs `audit -o json` runs times with each binary, the binaries taking turns, and
// returns each binary's median wall time, CPU time and peak RSS. Exit 0 is required: every
// context must be read.
func medians(ctx context.Context, runs int, binaries []string, kubeconfig string, args ...string) ([]measure, error) {
	cmds := make([]command, len(binaries))
	for b, binary := range binaries {
		cmds[b].argv = append([]string{binary, "audit", "-o", "json", "--kubeconfig", kubeconfig}, args...)
	}
	return mediansOf(ctx, runs, cmds)
}

// command is a process to time: its arguments, binary first, and what it adds to the
// environment.
type command struct {
	argv, env []string
}

// mediansOf runs each command runs times, the commands taking turns, and returns each one's
// median wall time, CPU time (its children's included), servers' CPU and peak RSS. Exit 0 is
// required.
func mediansOf(ctx context.Context, runs int, cmds []command) ([]measure, error) {
	rssFile := ""
	if _, err := os.Stat(timeBin); err == nil {
		f, err := os.CreateTemp("", "fleetbench-rss-")
		if err != nil {
			return nil, err
		}
		_ = f.Close()
		defer func() { _ = os.Remove(f.Name()) }()
		rssFile = f.Name()
	}
	walls, cpus, rsss := make([][]time.Duration, len(cmds)), make([][]time.Duration, len(cmds)), make([][]int64, len(cmds))
	servers := make([][]time.Duration, len(cmds))
	for range runs {
		for b, c := range cmds {
			argv := c.argv
			if rssFile != "" {
				argv = append([]string{timeBin, "-f", "%M", "-o", rssFile}, argv...)
			}
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			if c.env != nil {
				cmd.Env = append(os.Environ(), c.env...)
			}
			binary, args := c.argv[0], c.argv[1:]
			var stderr strings.Builder
			cmd.Stderr = &stderr
			before, start := serverCPU(), time.Now()
			err := cmd.Run()
			wall := time.Since(start)
			servers[b] = append(servers[b], serverCPU()-before)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w\n%s", binary, strings.Join(args, " "), err, stderr.String())
			}
			walls[b] = append(walls[b], wall)
			cpus[b] = append(cpus[b], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if rss, ok := readRSS(rssFile); ok {
				rsss[b] = append(rsss[b], rss)
			} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rsss[b] = append(rsss[b], ru.Maxrss<<10) // kilobytes on Linux
			}
		}
	}
	out := make([]measure, len(cmds))
	for b := range cmds {
		slices.Sort(walls[b])
		slices.Sort(cpus[b])
		slices.Sort(rsss[b])
		slices.Sort(servers[b])
		out[b] = measure{wall: walls[b][len(walls[b])/2], cpu: cpus[b][len(cpus[b])/2], server: servers[b][len(servers[b])/2]}
		if len(rsss[b]) > 0 {
			out[b].rss = rsss[b][len(rsss[b])/2]
		}
	}
	return out, nil
}

// floorPlan is how to run the floor over one kubeconfig: barelists, its plan, the lists a run
// sends, and the kubectl for the kubectl row ("" for none).
type floorPlan struct {
	bare, plan, kubectl string
	lists               int
}

// build builds the package pkg of this checkout into dir/name.
// timeBin is GNU time, which measures a command's peak resident size from a fork of its own.
// The kernel counts into a process's peak the size of the process it was forked from before it
// exec'd, and Go forks its children by vfork, so a child's rusage reports at least this
// benchmark's own resident size (some 85 MB). Without GNU time, rusage is reported.
const timeBin = "/usr/bin/time"

// readRSS reads the peak resident size GNU time wrote to file, in bytes.
func readRSS(file string) (int64, bool) {
	if file == "" {
		return 0, false
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	lines := strings.Fields(string(b))
	if len(lines) == 0 {
		return 0, false
	}
	kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return 0, false
	}
	return kb << 10, true
}

func build(dir, pkg, name string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository root")
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, b)
	}
	return out, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func msOf(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().UTC().Format("15:04:05 ")+format+"\n", args...)
}
