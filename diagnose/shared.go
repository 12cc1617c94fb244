package diagnose

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// Many workloads, one dependency. Each workload is diagnosed on its own, and a database that
// stops taking connections makes every workload that uses it fail at once, each with nothing
// wrong in its spec. After the workloads are diagnosed, the failures that dial somewhere are
// grouped by where they dial (a Service however its DNS name is written, or an outside host):
// two workloads or more failing on one target make a SharedDependency, named once, and each
// of them is told it is a victim, not the cause. A workload whose own revision changed the
// address it now fails on is left out: its change explains its failure.

// EvidenceSharedDependency is the kind of the evidence item a workload of a SharedDependency
// carries.
const EvidenceSharedDependency = "SharedDependency"

// SourceWorkloads marks evidence read from the other workloads of the report.
const SourceWorkloads EvidenceSource = "workloads"

// SharedDependency is one target that several broken workloads fail to reach at once.
type SharedDependency struct {
	// Target is the host (and port, when every member's failure names the same one) as a
	// failure names it: mysql:3306, db.example.com.
	Target string `json:"target"`
	// Object is the Service or StatefulSet of the snapshot the target resolves to, Kind/name;
	// "" for a host outside the cluster or one the snapshot does not hold.
	Object string `json:"object"`
	// Namespace is Object's namespace, or the namespace a cluster DNS name names; "" for a
	// host outside the cluster.
	Namespace string `json:"namespace"`
	// Failure is one member's failing line that names the target, as evidence shows it.
	Failure string `json:"failure"`
	// Workloads are the members, Kind/namespace/name, sorted.
	Workloads []string `json:"workloads"`
	// Pull says the members cannot pull their images from the target, an image registry;
	// otherwise their running copies fail to connect to it.
	Pull bool `json:"pull,omitempty"`
}

// depTarget is where a workload's failing connections go, as one workload reads it.
type depTarget struct {
	// key is the target's identity: a Service's namespace and name however its DNS name was
	// written, else the host.
	key        string
	host, port string
	// name is a cluster target's Service name however the failure wrote it; "" for an
	// outside host.
	name string
	// object and namespace as SharedDependency says them.
	object, namespace string
	failure           string
	// changed says the workload's current revision changed a value that names the target:
	// its own change, not the dependency, explains the failure.
	changed bool
	// registry: the copies cannot pull their images from the host.
	registry bool
}

// sharedVerdict is a diagnosis's cause and argument before the shared pass wrote on them, so a
// kept diagnosis (Rediagnose) is grouped again from what it said alone; the pass's evidence
// item is known by its kind and source.
type sharedVerdict struct {
	cause    Cause
	argument *Argument
	fix      string
}

// dialFailure reports a log signal whose failure is reaching something: the connection class,
// which holds a server refusing a connection for want of room ("Too many connections") too.
func dialFailure(s *signal) bool {
	return s.From == rules.FromLog && s.Class() == facts.ClassConnection
}

// indexFold is the index of the ASCII lower-case sub in s ignoring case, or -1; it does not
// allocate, as it reads every failing line of every broken workload.
func indexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if c := s[i] | 0x20; c != sub[0] {
			continue
		}
		if strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}

// dependencyTarget reads where the workload's failing connections go: the host the most
// failing log lines name (a lookup's name, else the first host:port, URL or host of a line,
// never the copy itself or loopback); when no line names one, the template's one endpoint value
// (of the kind of server the failures name, when they name one). nil when the workload's
// failures are not connection failures, or name no single target.
func (r *ranker) dependencyTarget() *depTarget {
	type hit struct {
		host, port, text string
		n                int
	}
	var hits []*hit
	var dialing []*signal
	for _, s := range r.in.Signals {
		if !dialFailure(s) {
			continue
		}
		dialing = append(dialing, s)
		host, port := dialedHost(s.Text, s.Tokens(), r.in.OwnHosts)
		if host == "" {
			continue
		}
		n := max(1, len(s.Lines))
		i := slices.IndexFunc(hits, func(h *hit) bool { return h.host == host })
		if i < 0 {
			hits = append(hits, &hit{host: host, port: port, text: shownText(s), n: n})
			continue
		}
		hits[i].n += n
		if hits[i].port == "" {
			hits[i].port = port
		}
	}
	if len(dialing) == 0 {
		return r.registryTarget()
	}
	if len(hits) > 0 {
		// The host most lines name; the first named on a tie.
		best := hits[0]
		for _, h := range hits[1:] {
			if h.n > best.n {
				best = h
			}
		}
		return r.resolveTarget(best.host, best.port, rules.Clip(best.text, 200))
	}
	host, port := r.templateEndpoint(dialing)
	if host == "" {
		return nil
	}
	return r.resolveTarget(host, port, rules.Clip(shownText(dialing[0]), 200))
}

// registryTarget is the registry the workload's copies cannot pull from: the host a pull
// failure of the network kind (the registry does not resolve, refuses, times out, answers 5xx)
// says it dialled, else the registry of the image it is about. nil when no pull fails that way:
// an image the registry does not have, or refuses to serve, is the reference's fault, not the
// registry's.
func (r *ranker) registryTarget() *depTarget {
	type hit struct {
		host, text string
		n          int
	}
	var hits []*hit
	for _, s := range r.in.Signals {
		if !rules.PullUnreachable(s) {
			continue
		}
		host := pullHost(s.Text)
		if host == "" {
			if img := pulledImage(s, r.in.Template); img != "" {
				host = rules.RegistryHost(img)
			}
		}
		if host == "" {
			continue
		}
		if i := slices.IndexFunc(hits, func(h *hit) bool { return h.host == host }); i >= 0 {
			hits[i].n++
			continue
		}
		hits = append(hits, &hit{host: host, text: s.Text, n: 1})
	}
	if len(hits) == 0 {
		return nil
	}
	best := hits[0]
	for _, h := range hits[1:] {
		if h.n > best.n {
			best = h
		}
	}
	host, port, _ := strings.Cut(best.host, ":")
	return &depTarget{key: "registry " + best.host, host: host, port: port, registry: true, failure: rules.Clip(best.text, 200)}
}

// pulledImage is the image a pull failure is about: the one its text quotes (`Failed to pull
// image "IMG"`, containerd's `failed to pull and unpack image "IMG"`), else the image of the
// template's container it names; "" when neither.
func pulledImage(s *signal, tpl *corev1.PodTemplateSpec) string {
	if i := strings.Index(s.Text, `image "`); i >= 0 {
		rest := s.Text[i+len(`image "`):]
		if j := strings.IndexByte(rest, '"'); j > 0 {
			return rest[:j]
		}
	}
	if tpl == nil || s.Container == "" {
		return ""
	}
	for _, cs := range [][]corev1.Container{tpl.Spec.Containers, tpl.Spec.InitContainers} {
		for i := range cs {
			if cs[i].Name == s.Container {
				return cs[i].Image
			}
		}
	}
	return ""
}

// pullHost is the registry host a pull failure says the runtime dialled, in lower case:
// containerd's request URL (`Head "https://HOST/v2/...": dial tcp ...`, `unexpected status from
// HEAD request to https://HOST/v2/...: 503 Service Unavailable`), else the name a failed lookup
// names; "" when the text names neither.
func pullHost(text string) string {
	for _, scheme := range []string{"https://", "http://"} {
		i := strings.Index(text, scheme)
		if i < 0 {
			continue
		}
		h := text[i+len(scheme):]
		if j := strings.IndexAny(h, "/\" \t"); j >= 0 {
			h = h[:j]
		}
		h = strings.ToLower(h)
		if h != "" && hostChars(strings.ReplaceAll(h, ":", "")) {
			return h
		}
	}
	host, _ := dialedHost(text, nil, nil)
	return host
}

// resolverFailures are the words after which a failed name lookup writes the name it looked
// up, as the runtimes write them: Go's net ("lookup mysql on 10.96.0.10:53: no such host",
// "lookup mysql: i/o timeout", whose host:port is the resolver), Node's dns
// ("getaddrinfo ENOTFOUND mysql"), Java's ("java.net.UnknownHostException: mysql: Name or
// service not known"), in lower case: they are matched ignoring case. tail says the name must be followed by ":" or " on " (Go's), so that
// "DNS lookup failed" names no host "failed".
var resolverFailures = []struct {
	prefix string
	tail   bool
}{
	{"lookup ", true},
	{"getaddrinfo enotfound ", false},
	{"getaddrinfo eai_again ", false},
	{"unknownhostexception: ", false},
}

// dialedHost is the host (and port) a failing line says it dialled: the name of a failed
// lookup (resolverFailures), else the first host:port, URL host or dotted host the line names
// in lower case.
func dialedHost(text string, toks []facts.Value, own map[string]bool) (string, string) {
	for _, rf := range resolverFailures {
		i := indexFold(text, rf.prefix)
		if i < 0 {
			continue
		}
		w, rest := text[i+len(rf.prefix):], ""
		if j := strings.IndexAny(w, " :;,\"'()"); j >= 0 {
			w, rest = w[:j], w[j:]
		}
		w = strings.ToLower(strings.TrimSuffix(w, "."))
		if w != "" && hostChars(w) && !facts.Loopback(w) && !facts.IsIP(w) &&
			(!rf.tail || strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " on ")) {
			return w, ""
		}
	}
	for _, kind := range []facts.ValueKind{facts.ValueHostPort, facts.ValueURL, facts.ValueHost} {
		for _, t := range toks {
			// A name the line writes with capitals is code (a Java or Python class path,
			// com.mysql.cj.jdbc.exceptions.CommunicationsException), not a host: hosts are
			// written in lower case, and the values are lowered.
			if t.Kind != kind || t.Host == "" || own[t.Host] || facts.Loopback(t.Host) || !hostChars(t.Host) || !strings.Contains(text, t.Host) {
				continue
			}
			if kind == facts.ValueHost && !strings.Contains(t.Host, ".") {
				// A bare word is a host only where a resolver says so (above): "DNS lookup
				// failed" names none.
				continue
			}
			return strings.TrimSuffix(t.Host, "."), t.Port
		}
	}
	return "", ""
}

// hostChars reports whether s is written as a host name or IPv4 address.
func hostChars(s string) bool {
	for i := range len(s) {
		c := s[i]
		if hostByte(c) || 'A' <= c && c <= 'Z' {
			continue
		}
		return false
	}
	return s != "" && s[0] != '-' && s[0] != '.'
}

// templateEndpoint is the one endpoint the template's plain env values name, for failures that
// name none ("Error 1040: Too many connections"): narrowed to the kind of server the failures
// name when several are set; "" when none, or several remain.
func (r *ranker) templateEndpoint(dialing []*signal) (string, string) {
	type endpoint struct{ host, port, words string }
	var eps []endpoint
	spec := &r.w.Template.Spec
	for ci := range spec.Containers {
		for _, e := range spec.Containers[ci].Env {
			if e.ValueFrom != nil || e.Value == "" {
				continue
			}
			host, port := "", ""
			for _, t := range facts.Values(e.Value) {
				if (t.Kind == facts.ValueHostPort || t.Kind == facts.ValueURL || t.Kind == facts.ValueHost) && t.Host != "" {
					host, port = t.Host, t.Port
					break
				}
			}
			if host == "" && rules.EndpointVariable(e.Name) && !strings.HasSuffix(strings.ToUpper(e.Name), "PORT") &&
				hostChars(e.Value) && strings.ContainsAny(strings.ToLower(e.Value), "abcdefghijklmnopqrstuvwxyz") {
				host = strings.ToLower(e.Value) // DB_HOST=mysql: a Service in the namespace
			}
			if host == "" || facts.Loopback(host) || r.in.OwnHosts[host] {
				continue
			}
			if !slices.ContainsFunc(eps, func(o endpoint) bool { return o.host == host }) {
				eps = append(eps, endpoint{host, port, strings.ToLower(e.Name + " " + e.Value)})
			}
		}
	}
	if len(eps) > 1 {
		var failures strings.Builder
		for _, s := range dialing {
			failures.WriteString(strings.ToLower(s.Text))
			failures.WriteByte(' ')
		}
		var named []endpoint
		for _, ep := range eps {
			if rules.SameServer(failures.String(), ep.words) {
				named = append(named, ep)
			}
		}
		eps = named
	}
	if len(eps) != 1 {
		return "", ""
	}
	return eps[0].host, eps[0].port
}

// resolveTarget names the target host in the cluster: a cluster DNS name (name, name.ns,
// name.ns.svc[.domain], pod.name.ns.svc[.domain]) or a Service's cluster IP is that Service,
// else a StatefulSet of that name or governing Service; any other host is itself.
func (r *ranker) resolveTarget(host, port, failure string) *depTarget {
	host = strings.ToLower(host)
	t := &depTarget{key: "host " + host, host: host, port: port, failure: failure}
	s, ns := r.w.Snap, r.w.Namespace
	name, svcNS, cluster := clusterName(host, ns)
	if s != nil && facts.IsIP(host) {
		for _, svc := range s.Services {
			if svc.Spec.ClusterIP == host {
				name, svcNS, cluster = svc.Name, svc.Namespace, true
				break
			}
		}
	}
	if !cluster && name != "" && s != nil {
		switch {
		case serviceNamed(s, svcNS, name) != nil:
			cluster = true // name.ns where a Service name lives in namespace ns
		case serviceNamed(s, ns, svcNS) != nil:
			// pod.name: a StatefulSet's copy through its headless Service in the namespace.
			name, svcNS, cluster = svcNS, ns, true
		}
	}
	if !cluster {
		return t
	}
	t.key, t.name, t.namespace = "service "+svcNS+"/"+name, name, svcNS
	if s == nil {
		return t
	}
	if svc := serviceNamed(s, svcNS, name); svc != nil {
		t.object = "Service/" + svc.Name
	} else {
		for _, st := range s.StatefulSets {
			if st.Namespace == svcNS && (st.Name == name || st.Spec.ServiceName == name) {
				t.object = "StatefulSet/" + st.Name
				break
			}
		}
	}
	return t
}

// clusterName reads a cluster DNS name: the Service's name and namespace, and whether the
// name is surely the cluster's (one label, or a .svc name). A two-label name (name.ns) is
// returned unsure: it is the cluster's only when that Service exists.
func clusterName(host, ns string) (string, string, bool) {
	if facts.IsIP(host) {
		return "", "", false
	}
	labels := strings.Split(host, ".")
	if i := slices.Index(labels, "svc"); i >= 2 && i <= 3 {
		return labels[i-2], labels[i-1], true
	}
	switch len(labels) {
	case 1:
		return labels[0], ns, true
	case 2:
		return labels[0], labels[1], false
	}
	return "", "", false
}

func serviceNamed(s *snapshot.Snapshot, ns, name string) *corev1.Service {
	for _, svc := range s.ServicesIn(ns) {
		if svc.Name == name {
			return svc
		}
	}
	return nil
}

// changedAddress reports whether the revision that replaced the last serving one changed a
// value that names the target (its host as the failure wrote it, or the Service's name as a
// whole DNS label): the workload moved to the target itself.
func changedAddress(w *workload, t *depTarget) bool {
	name := ""
	if _, n, ok := strings.Cut(t.object, "/"); ok {
		name = n
	}
	for _, c := range w.Changes {
		if c.Current == c.Previous {
			continue
		}
		v := strings.ToLower(c.Current)
		if t.registry {
			// A new tag on the same registry is no move: the registry fails every image.
			if namesHost(v, t.host) && !namesHost(strings.ToLower(c.Previous), t.host) {
				return true
			}
			continue
		}
		if namesHost(v, t.host) || name != "" && namesHost(v, name) {
			return true
		}
	}
	return false
}

// namesHost reports whether v holds host as whole labels: mysql in mysql:3306 and
// mysql.db.svc, not in mysql-old.
func namesHost(v, host string) bool {
	for from := 0; ; {
		i := strings.Index(v[from:], host)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(host)
		before := i == 0 || !hostByte(v[i-1])
		after := j == len(v) || v[j] == '.' || !hostByte(v[j])
		if before && after {
			return true
		}
		from = i + 1
	}
}

func hostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// groupSharedDependencies finds the targets several broken workloads fail on and writes them
// into r: its SharedDependencies, and each member's evidence and, where its own diagnosis
// could not tell (cause unknown), its cause. It first undoes what an earlier pass wrote on a
// diagnosis kept from another report.
func groupSharedDependencies(r *Report) {
	hosts := map[string][]int{}
	var keys []string
	for i := range r.Workloads {
		d := &r.Workloads[i]
		if d.Detail == nil {
			continue
		}
		if v := d.Detail.beforeShared; v != nil {
			// The diagnosis is kept from another report, which still holds its Detail and
			// evidence: neither is written in place.
			dd := *d.Detail
			dd.beforeShared = nil
			d.Detail = &dd
			d.Cause, d.Argument, d.Fix = v.cause, v.argument, v.fix
			d.Evidence = slices.DeleteFunc(slices.Clone(d.Evidence), func(e Evidence) bool {
				return e.Kind == EvidenceSharedDependency && e.Source == SourceWorkloads
			})
		}
		t := d.Detail.target
		if t == nil || t.changed || !d.Shape.Broken() {
			continue
		}
		if _, ok := hosts[t.key]; !ok {
			keys = append(keys, t.key)
		}
		hosts[t.key] = append(hosts[t.key], i)
	}
	r.SharedDependencies = []SharedDependency{}
	slices.Sort(keys)
	for _, k := range keys {
		for _, members := range byPort(r, hosts[k]) {
			if len(members) >= 2 {
				r.SharedDependencies = append(r.SharedDependencies, shareDependency(r, members))
			}
		}
	}
}

// byPort splits the workloads at members, which fail on one host, by the port they dial where
// their failures name one: mysql:3306 and mysql:33060 are two servers, which fail apart. A
// member whose failure names no port (a name that does not resolve fails every port) joins
// the host's one port, or, when several are named, stays with the others that name none.
func byPort(r *Report, members []int) [][]int {
	var ports []string
	for _, i := range members {
		if p := r.Workloads[i].Detail.target.port; p != "" && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	if len(ports) <= 1 {
		return [][]int{members}
	}
	slices.Sort(ports)
	groups := make([][]int, len(ports)+1)
	for _, i := range members {
		g := slices.Index(ports, r.Workloads[i].Detail.target.port) + 1 // 0: no port named
		groups[g] = append(groups[g], i)
	}
	return groups
}

// shareDependency makes the SharedDependency of the workloads at members, which fail on one
// target, and tells each of them.
func shareDependency(r *Report, members []int) SharedDependency {
	first := r.Workloads[members[0]].Detail.target
	sd := SharedDependency{Object: first.object, Namespace: first.namespace, Failure: first.failure, Pull: first.registry}
	// The port only when every member's failure names it: a member that names none may dial
	// another (byPort left at most one port among them).
	port := first.port
	names := make([]string, 0, len(members))
	for _, i := range members {
		d := &r.Workloads[i]
		if p := d.Detail.target.port; p != port {
			port = ""
		}
		names = append(names, d.Kind+"/"+d.Namespace+"/"+d.Name)
	}
	slices.Sort(names)
	sd.Workloads = names
	// The target as the cluster names it, one name for its spellings: the Service's name.
	sd.Target = first.host
	if first.name != "" {
		sd.Target = first.name
	}
	if port != "" {
		sd.Target += ":" + port
	}
	what := sd.Target
	if sd.Object != "" {
		what += " (" + sd.Object + ")"
	}
	// What the members are told depends only on their namespace, which shortens the names.
	type told struct{ what, evidence string }
	msgs := map[string]told{}
	for _, i := range members {
		d := &r.Workloads[i]
		dd := *d.Detail
		dd.beforeShared = &sharedVerdict{cause: d.Cause, argument: d.Argument, fix: d.Fix}
		d.Detail = &dd
		others := make([]string, 0, len(names)-1)
		self := d.Kind + "/" + d.Namespace + "/" + d.Name
		for _, n := range names {
			if n != self {
				others = append(others, n)
			}
		}
		msg, ok := msgs[d.Namespace]
		if !ok {
			verb := "fail reaching"
			if sd.Pull {
				verb = "cannot pull their images from registry"
			}
			msg.what = fmt.Sprintf("%d workloads %s %s at once: %s", len(names), verb, what, strings.Join(shortNames(names, d.Namespace), ", "))
			msg.evidence = msg.what + ": the dependency is at fault, not their specs"
			msgs[d.Namespace] = msg
		}
		told := msg.evidence
		if d.Cause == CauseSpec {
			// Its own argument named a change of its spec (not of the address): both are
			// said, and the cause stays what its history shows.
			told = msg.what + ": the dependency fails them all; this workload's own spec change is argued apart (cause spec)"
		}
		ev := make([]Evidence, 0, len(d.Evidence)+1)
		ev = append(ev, d.Evidence...)
		d.Evidence = append(ev, Evidence{
			Kind: EvidenceSharedDependency, Message: told, Source: SourceWorkloads,
			Objects: others, Count: int32(len(names)),
		})
		if d.Cause == CauseUnknown {
			// What to look at is the dependency: its endpoints, its own copies, or the host.
			d.Fix = dependencyFix(&sd, len(names))
			d.Cause = CauseDependency
			unchanged, dial := "did not change the address", "dial"
			if sd.Pull {
				unchanged, dial = "did not move its image to that registry", "pull from"
			}
			d.Argument = &Argument{
				Object:  sd.Object,
				For:     "dependency: " + msg.what + ", and the spec of " + d.Kind + "/" + d.Name + " " + unchanged,
				Against: "not spec: the same failure in workloads that share no spec points outward, at what they all " + dial,
			}
		}
	}
	return sd
}

// shortNames writes Kind/namespace/name as Kind/name for the namespace ns.
func shortNames(names []string, ns string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		kind, rest, _ := strings.Cut(n, "/")
		if nsOf, name, ok := strings.Cut(rest, "/"); ok && nsOf == ns {
			n = kind + "/" + name
		}
		out[i] = n
	}
	return out
}

// shownText is a log signal's line as evidence shows it: a structured line's message fields.
func shownText(s *signal) string { return s.Reading().Line(s.Text).Text }

// dependencyFix is a victim's fix: look at the dependency, not at its own spec.
func dependencyFix(sd *SharedDependency, n int) string {
	if sd.Object == "" {
		if sd.Pull {
			return fmt.Sprintf("check registry %s from the nodes (%d workloads cannot pull from it; their specs are not at fault)", sd.Target, n)
		}
		return fmt.Sprintf("check %s from the cluster's network (%d workloads fail reaching it; their specs are not at fault)", sd.Target, n)
	}
	kind, name, _ := strings.Cut(sd.Object, "/")
	ns := ""
	if sd.Namespace != "" {
		ns = " -n " + shellQuote(sd.Namespace)
	}
	return fmt.Sprintf("kubectl describe %s%s (%d workloads fail reaching it; their specs are not at fault)",
		shellQuote(strings.ToLower(kind)+"/"+name), ns, n)
}
