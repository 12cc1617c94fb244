package main

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/controlplane"
)

// served is what the API servers counted of lists: the LIST requests they answered
// (apiserver_request_total, verb LIST) and the lists their storage layer served, by where from
// (apiserver_storage_list_total's storage: "watchcache", "etcd").
type served map[string]float64

// listsServed sums the list counters of every control plane's API server.
func listsServed(ctx context.Context, cps []*controlplane.ControlPlane) (served, error) {
	out := served{}
	for _, cp := range cps {
		cs, err := kubernetes.NewForConfig(cp.AdminConfig())
		if err != nil {
			return nil, err
		}
		b, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("metrics of %s: %w", cp.Host(), err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			name, rest, ok := strings.Cut(line, "{")
			if !ok {
				continue
			}
			labels, value, ok := strings.Cut(rest, "} ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				continue
			}
			switch name {
			case "apiserver_request_total":
				if strings.Contains(labels, `verb="LIST"`) {
					out["LIST requests"] += v
				}
			case "apiserver_storage_list_total":
				var storage, resource string
				for _, l := range strings.Split(labels, ",") {
					if k, s, ok := strings.Cut(l, "="); ok {
						switch k {
						case "storage":
							storage = strings.Trim(s, `"`)
						case "resource":
							resource = strings.Trim(s, `"`)
						}
					}
				}
				out["from "+storage] += v
				if storage != "watchcache" {
					// Which lists miss the watch cache is the question; name them.
					out["from "+storage+": "+resource] += v
				}
			}
		}
	}
	return out, nil
}

// countLists runs c once and says what the servers counted of lists meanwhile.
func countLists(ctx context.Context, cps []*controlplane.ControlPlane, c command) (string, error) {
	before, err := listsServed(ctx, cps)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", c.argv[0], err, out)
	}
	after, err := listsServed(ctx, cps)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if after[k] == before[k] {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f", k, after[k]-before[k]))
	}
	return strings.Join(parts, ", "), nil
}
