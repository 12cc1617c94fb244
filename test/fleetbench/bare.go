package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The floor: what the fleet costs when the client does the least it can. barelists (built
// beside the tool, standard library alone) sends the same lists as a fleet's audit: every kind
// of snapshot.Kinds in each context's namespace, Nodes once per server, protobuf, from the
// watch cache, 500 a page; the contexts in the tool's order (the first of every server, then
// the second), at the same bound, a context's lists all at once, each server's contexts over
// one HTTP/2 connection; and it reads every body to its end without decoding it. Its wall time
// is what the servers, the loopback and a process start cost the fleet; what the tool adds to
// it is the decoding, the engine and the printing.

// barePlan is barelists' plan for the fleet of kubeconfig kc.
type barePlan struct {
	Servers []struct {
		Host, CA, Token string
	}
	Contexts []struct {
		Server int
		Paths  []string
	}
}

// writePlan writes barelists' plan for the contexts of kc to file and returns how many lists
// a run sends.
func writePlan(kc *clientcmdapi.Config, contexts []string, file string) (int, error) {
	var plan barePlan
	index := map[string]int{}
	byServer := map[int][]string{}
	for _, name := range contexts {
		c := kc.Contexts[name]
		key := c.Cluster + "\x00" + c.AuthInfo
		i, ok := index[key]
		if !ok {
			i = len(plan.Servers)
			index[key] = i
			cl, user := kc.Clusters[c.Cluster], kc.AuthInfos[c.AuthInfo]
			if cl == nil || user == nil || user.Token == "" {
				return 0, fmt.Errorf("context %s: the floor's client takes a server and a token", name)
			}
			plan.Servers = append(plan.Servers, struct{ Host, CA, Token string }{cl.Server, string(cl.CertificateAuthorityData), user.Token})
		}
		byServer[i] = append(byServer[i], name)
	}
	lists := 0
	for round := 0; len(plan.Contexts) < len(contexts); round++ {
		for i := range plan.Servers {
			if round >= len(byServer[i]) {
				continue
			}
			var paths []string
			for _, p := range listPaths(kc.Contexts[byServer[i][round]].Namespace) {
				if p.cluster && round > 0 {
					continue // Nodes once per server and identity, as the tool lists them.
				}
				paths = append(paths, p.path+"?limit=500&resourceVersion=0")
			}
			lists += len(paths)
			plan.Contexts = append(plan.Contexts, struct {
				Server int
				Paths  []string
			}{i, paths})
		}
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return 0, err
	}
	return lists, os.WriteFile(file, b, 0o600)
}

type listPath struct {
	path    string
	cluster bool
}

// listPaths are the paths of the lists a context's read sends, from the kinds the tool reads.
func listPaths(ns string) []listPath {
	var out []listPath
	for _, k := range snapshot.Kinds {
		prefix := "/api/" + k.GVK.Version
		if k.GVK.Group != "" {
			prefix = "/apis/" + k.GVK.Group + "/" + k.GVK.Version
		}
		if k.Cluster {
			out = append(out, listPath{path: prefix + "/" + k.Resource, cluster: true})
			continue
		}
		out = append(out, listPath{path: prefix + "/namespaces/" + ns + "/" + k.Resource})
	}
	return out
}

// resourcesOf names the kinds the tool reads as kubectl get takes them, namespaced ones first:
// "deployments.apps,...,pods,...", and the cluster-scoped ones apart.
func resourcesOf() (namespaced, cluster string) {
	var ns, cl []string
	for _, k := range snapshot.Kinds {
		r := k.Resource
		if k.GVK.Group != "" {
			r += "." + k.GVK.Group
		}
		if k.Cluster {
			cl = append(cl, r)
		} else {
			ns = append(ns, r)
		}
	}
	return strings.Join(ns, ","), strings.Join(cl, ",")
}

// kubectlLists is the child's work for the kubectl row: `kubectl get` of the namespaced kinds
// in each context, bound at a time, and of the cluster-scoped kinds once per server; each
// kubectl is a process of its own, as a script over the contexts would run it. argv is kubectl,
// the kubeconfig, the bound, then the contexts. The child's CPU time includes its kubectls'.
func kubectlLists(ctx context.Context, argv []string) error {
	if len(argv) < 4 {
		return errors.New("kubectl: want kubectl, kubeconfig, bound, contexts")
	}
	kubectl, kubeconfig := argv[0], argv[1]
	var bound int
	if _, err := fmt.Sscan(argv[2], &bound); err != nil || bound < 1 {
		return fmt.Errorf("kubectl: bad bound %q", argv[2])
	}
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return err
	}
	namespaced, cluster := resourcesOf()
	seen := map[string]bool{}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		sem      = make(chan struct{}, bound)
	)
	run := func(args ...string) {
		defer wg.Done()
		defer func() { <-sem }()
		c := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig, "-o", "name"}, args...)...)
		c.Stdout = io.Discard
		var stderr strings.Builder
		c.Stderr = &stderr
		if err := c.Run(); err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
			}
			mu.Unlock()
		}
	}
	for _, name := range strings.Split(argv[3], ",") {
		c := kc.Contexts[name]
		if c == nil {
			return fmt.Errorf("kubectl: no context %q", name)
		}
		sem <- struct{}{}
		wg.Add(1)
		go run("--context", name, "get", namespaced)
		if key := c.Cluster + "\x00" + c.AuthInfo; !seen[key] {
			seen[key] = true
			sem <- struct{}{}
			wg.Add(1)
			go run("--context", name, "get", cluster)
		}
	}
	wg.Wait()
	return firstErr
}

// bareEnv, set to "kubectl", makes fleetbench the child that runs the kubectl row.
const bareEnv = "FLEETBENCH_CHILD"

// runChild is main for a child fleetbench started with bareEnv.
func runChild(mode string) {
	var err error
	switch mode {
	case "kubectl":
		err = kubectlLists(context.Background(), os.Args[1:])
	default:
		err = fmt.Errorf("unknown %s=%s", bareEnv, mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
