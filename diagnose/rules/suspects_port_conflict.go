package rules

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RulePortInUse is the port-conflict rule's ID; IDs are stable: scripts and the documentation
// refer to them.
const RulePortInUse RuleID = "port-in-use"

// portConflictFamily reads a container that cannot bind a port because another process of the
// pod (containers share the pod's network namespace) holds it: the containerPort the failing
// container declares for it, another container's, or a template annotation that gives an
// injected sidecar that port.
var _ = register(family{
	order:  72,
	name:   "port-conflict",
	detect: (*ranker).portInUse,
	rules: []RuleInfo{
		{
			RulePortInUse, "Two processes of the pod want the same port",
			"`bind: address already in use` (Go), `Port N was already in use` (Spring Boot), `EADDRINUSE` (Node) naming a port a containerPort or a template annotation claims",
			"Give one of them another port: the failing container's, a sidecar's, or the injector's annotation.", false,
		},
	},
})

// rePortInUse finds the port a bind failure names: Go's `listen tcp :9102: bind: address
// already in use`, Spring Boot's `Port 9090 was already in use.`, Node's `listen EADDRINUSE:
// address already in use :::3000`.
var rePortInUse = regexp.MustCompile(`(?i)port (\d+) was already in use|:(\d+): bind: address already in use|eaddrinuse: address already in use \S*?:(\d+)`)

func (r *ranker) portInUse() {
	for _, s := range r.in.Signals {
		if !strings.Contains(s.Text, "lready in use") {
			continue
		}
		m := rePortInUse.FindStringSubmatch(s.Text)
		if m == nil {
			continue
		}
		port, err := strconv.Atoi(firstNonEmpty(m[1:]...))
		if err != nil {
			continue
		}
		r.read(s)
		if r.portClaims(s, int32(port)) {
			s.Explained = true
		}
	}
}

// portClaims names the fields that claim port for processes of the pod: the failing
// container's own containerPort first (the conflict is between it and the holder), then the
// other containers' and the annotations that give an injected sidecar that port.
func (r *ranker) portClaims(s *Signal, port int32) bool {
	said := fmt.Sprintf("container %s cannot bind port %d: another process of the pod holds it (%s)", s.Container, port, Clip(s.Text, 120))
	found := false

	for _, c := range r.containers() {
		for j, p := range c.c.Ports {
			if p.ContainerPort != port {
				continue
			}
			path := c.path.Child("ports").Index(j).Child("containerPort")
			if c.c.Name == s.Container {
				r.suspectTemplate(RulePortInUse, path, scoreCertain, said+"; "+c.c.Name+" declares it as "+portName(p.Name))
			} else {
				r.suspectTemplate(RulePortInUse, path, scoreLikely, said+"; container "+c.c.Name+" declares it too")
			}
			found = true
		}
	}
	keys := make([]string, 0, len(r.in.Template.Annotations))
	for k := range r.in.Template.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := strconv.Itoa(int(port))
	for _, k := range keys {
		if r.in.Template.Annotations[k] != want || !strings.Contains(strings.ToLower(k), "port") {
			continue
		}
		r.suspectTemplate(RulePortInUse, r.tplPath.Child("metadata", "annotations").Key(k), scoreLikely,
			said+"; annotation "+k+" gives an injected sidecar that port")
		found = true
	}
	return found
}

func portName(name string) string {
	if name == "" {
		return "an unnamed port"
	}
	return "port " + name
}
